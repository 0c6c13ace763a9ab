// NormalCone: a cone (unit axis, half-angle) containing every triangle normal of a BVH node.
// With a half-angle below 90 degrees the region is a height field over the plane normal to the
// axis, the first half of the self-intersection culling test (Volino & Magnenat-Thalmann 1994).
#pragma once

#include "untangle/types.hpp"

namespace untangle {

struct NormalCone {
  Vec3 axis = Vec3::UnitZ();
  double half_angle = 0;  // radians; >= pi means "any direction"

  static NormalCone from_normal(const Vec3& unit_normal) { return {unit_normal, 0.0}; }
  // The cone of a triangle; "any direction" when it has no normal (zero area, non-finite).
  static NormalCone from_triangle(const Vec3& a, const Vec3& b, const Vec3& c);
  static NormalCone any() { return {Vec3::UnitZ(), kAnyAngle}; }
  // The smallest cone (of this construction) containing both.
  static NormalCone merge(const NormalCone& a, const NormalCone& b);
  // The cone of two triangle cones (half-angle 0 or any()), around the bisector: what merge
  // gives, without its sine and cosine (the refit builds one per quad leaf).
  static NormalCone of_two(const NormalCone& a, const NormalCone& b);
  bool narrower_than_right_angle() const;
  bool contains(const Vec3& unit_direction, double tolerance = 1e-12) const;

  static constexpr double kAnyAngle = 3.14159265358979323846;
};

}  // namespace untangle

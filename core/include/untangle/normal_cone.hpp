// NormalCone: a cone (unit axis, cosine of the half-angle) containing every triangle normal of a
// BVH node. With a half-angle below 90 degrees the region is a height field over the plane normal
// to the axis, the first half of the self-intersection culling test (Volino & Magnenat-Thalmann
// 1994). Kept in cosines, so the per-frame refit merges cones without trigonometric functions.
#pragma once

#include "untangle/types.hpp"

namespace untangle {

struct NormalCone {
  Vec3 axis = Vec3::UnitZ();
  double cos_half = 1;  // cosine of the half-angle; -1 (a half-angle of pi) means "any direction"

  static NormalCone from_normal(const Vec3& unit_normal) { return {unit_normal, 1.0}; }
  // The cone of a triangle; "any direction" when it has no normal (zero area, non-finite).
  static NormalCone from_triangle(const Vec3& a, const Vec3& b, const Vec3& c);
  static NormalCone any() { return {Vec3::UnitZ(), -1.0}; }
  // A cone containing both, rounded outwards: the smallest one when it is narrower than 90
  // degrees, else "any direction" (a cone of 90 degrees or more only says "not cullable").
  static NormalCone merge(const NormalCone& a, const NormalCone& b);
  // The cone of two triangle cones (one normal each, or any()), around the bisector: what merge
  // gives, with less work (the refit builds one per quad leaf).
  static NormalCone of_two(const NormalCone& a, const NormalCone& b);
  bool is_any() const { return cos_half <= -1; }
  bool narrower_than_right_angle() const { return cos_half > 0; }
  // unit_direction makes an angle of at most the half-angle with the axis, up to `tolerance` in
  // the cosine.
  bool contains(const Vec3& unit_direction, double tolerance = 0) const;
  double sin_half() const;
};

}  // namespace untangle

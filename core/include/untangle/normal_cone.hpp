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
  // The smallest cone (of this construction) containing both.
  static NormalCone merge(const NormalCone& a, const NormalCone& b);
  bool narrower_than_right_angle() const;
};

}  // namespace untangle

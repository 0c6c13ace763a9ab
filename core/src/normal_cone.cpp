#include "untangle/normal_cone.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace untangle {

NormalCone NormalCone::from_triangle(const Vec3& a, const Vec3& b, const Vec3& c) {
  const Vec3 n = (b - a).cross(c - a);
  const double length = n.norm();
  if (!(length > 0) || !std::isfinite(length)) return any();
  return from_normal(n / length);
}

NormalCone NormalCone::merge(const NormalCone& a, const NormalCone& b) {
  if (a.half_angle >= kAnyAngle || b.half_angle >= kAnyAngle) return any();
  const double cos_between = std::clamp(a.axis.dot(b.axis), -1.0, 1.0);
  const double between = std::acos(cos_between);
  if (between + b.half_angle <= a.half_angle) return a;
  if (between + a.half_angle <= b.half_angle) return b;
  const double half = 0.5 * (between + a.half_angle + b.half_angle);
  if (half >= kAnyAngle) return any();
  // Rotate a's axis towards b's in their common plane, so that the new cone touches the far
  // sides of both. Nearly opposite axes have no common plane, but then half is close to pi.
  const Vec3 ortho = b.axis - cos_between * a.axis;
  const double ortho_length = ortho.norm();
  if (!(ortho_length > 1e-12)) {
    // (Nearly) the same axis: no common plane is needed, widening a by the angle between
    // the axes contains b. (Nearly) opposite axes were caught above: half is then near pi.
    const double wide = std::max(a.half_angle, b.half_angle) + between;
    return wide >= kAnyAngle ? any() : NormalCone{a.axis, wide * (1 + 1e-12) + 1e-12};
  }
  const double turn = half - a.half_angle;
  Vec3 axis = std::cos(turn) * a.axis + std::sin(turn) * (ortho / ortho_length);
  axis.normalize();
  // Rounding may leave a child a hair outside; a tiny widening keeps containment exact.
  return {axis, std::min(half * (1 + 1e-12) + 1e-12, kAnyAngle)};
}

NormalCone NormalCone::of_two(const NormalCone& a, const NormalCone& b) {
  if (a.half_angle != 0 || b.half_angle != 0) return merge(a, b);
  const Vec3 sum = a.axis + b.axis;
  const double sum_length = sum.norm();
  // (Nearly) opposite normals have no reliable bisector; the cone is then near 90 degrees.
  if (!(sum_length > 1e-6)) return any();
  const double half = 0.5 * std::acos(std::clamp(a.axis.dot(b.axis), -1.0, 1.0));
  // The bisector makes exactly half the angle with each normal; the widening covers rounding.
  return {sum / sum_length, std::min(half * (1 + 1e-12) + 1e-12, kAnyAngle)};
}

bool NormalCone::narrower_than_right_angle() const {
  return half_angle < 0.5 * std::numbers::pi;
}

bool NormalCone::contains(const Vec3& unit_direction, double tolerance) const {
  if (half_angle >= kAnyAngle) return true;
  const double angle = std::acos(std::clamp(axis.dot(unit_direction), -1.0, 1.0));
  return angle <= half_angle + tolerance;
}

}  // namespace untangle

#include "untangle/normal_cone.hpp"

#include <algorithm>
#include <cmath>

namespace untangle {

namespace {

// Every cone is widened by this much in the cosine, far above the rounding of the few products
// that make it, so a child cone stays inside its parent.
constexpr double kWidening = 1e-12;
// Spans closer to 180 degrees than about 1.4e-6 radians count as reaching it (cosine margin).
constexpr double kHalfTurnMargin = 1e-12;

// An angle from its cosine and sine (sin >= 0 for angles in [0, pi]).
struct Angle {
  double cos, sin;
  Angle plus(const Angle& o) const {
    return {cos * o.cos - sin * o.sin, sin * o.cos + cos * o.sin};
  }
  Angle minus(const Angle& o) const {
    return {cos * o.cos + sin * o.sin, sin * o.cos - cos * o.sin};
  }
  // In [0, pi - margin): the sum of two angles of [0, pi] is told apart from 2 pi minus it.
  bool below_half_turn() const { return sin >= 0 && cos > -1 + kHalfTurnMargin; }
  bool at_most(const Angle& o) const { return sin >= 0 && cos >= o.cos; }  // both in [0, pi]
};

NormalCone widened(const Vec3& axis, double cos_half) {
  return {axis, std::max(cos_half - kWidening, -1.0)};
}

}  // namespace

double NormalCone::sin_half() const {
  return std::sqrt(std::max((1 - cos_half) * (1 + cos_half), 0.0));
}

NormalCone NormalCone::from_triangle(const Vec3& a, const Vec3& b, const Vec3& c) {
  const Vec3 n = (b - a).cross(c - a);
  const double length = n.norm();
  if (!(length > 0) || !std::isfinite(length)) return any();
  return from_normal(n / length);
}

// The merged cone spans from the far side of a, through both axes, to the far side of b: its
// half-angle is half of theta + alpha + beta (theta between the axes) and its axis is a's turned
// towards b by that half minus alpha. Cosines and sines of those sums come from the addition
// formulas, of half an angle from the double-angle ones, each in its well-conditioned form.
NormalCone NormalCone::merge(const NormalCone& a, const NormalCone& b) {
  if (a.is_any() || b.is_any()) return any();
  const double cos_theta = std::clamp(a.axis.dot(b.axis), -1.0, 1.0);
  // b's part normal to a: its length is the sine of theta, its direction the way to turn a.
  const Vec3 ortho = b.axis - cos_theta * a.axis;
  const double ortho_length = ortho.norm();
  const Angle theta{cos_theta, ortho_length};
  const Angle alpha{a.cos_half, a.sin_half()};
  const Angle beta{b.cos_half, b.sin_half()};
  const Angle theta_beta = theta.plus(beta);
  if (theta_beta.at_most(alpha)) return widened(a.axis, a.cos_half);
  if (theta.plus(alpha).at_most(beta)) return widened(b.axis, b.cos_half);
  const Angle theta_alpha = theta.plus(alpha);
  const Angle span = theta_alpha.plus(beta);
  if (!theta_alpha.below_half_turn() || !span.below_half_turn()) return any();
  if (!(ortho_length > 1e-12)) {
    // (Nearly) the same axis, so no common plane: a's axis with the wider half-angle plus theta.
    const Angle wider = a.cos_half < b.cos_half ? alpha : beta;
    return widened(a.axis, wider.plus(theta).cos);
  }
  // Twice the turn, theta + beta - alpha, lies in (0, pi) here.
  const Angle twice_turn = theta_beta.minus(alpha);
  Angle turn;
  if (twice_turn.cos >= 0) {
    turn.cos = std::sqrt(0.5 * (1 + twice_turn.cos));
    turn.sin = twice_turn.sin / (2 * turn.cos);
  } else {
    turn.sin = std::sqrt(0.5 * (1 - twice_turn.cos));
    turn.cos = twice_turn.sin / (2 * turn.sin);
  }
  Vec3 axis = turn.cos * a.axis + turn.sin * (ortho / ortho_length);
  axis.normalize();
  // The direction of ortho is off by about 1e-16 / |ortho|, the axis by that times the turn's
  // sine: widened by that too.
  const double cos_half = alpha.plus(turn).cos - 1e-15 * turn.sin / ortho_length;
  return widened(axis, cos_half);
}

NormalCone NormalCone::of_two(const NormalCone& a, const NormalCone& b) {
  if (a.cos_half != 1 || b.cos_half != 1) return merge(a, b);
  const Vec3 sum = a.axis + b.axis;
  const double sum_length = sum.norm();
  // (Nearly) opposite normals have no reliable bisector; the cone is then near 90 degrees.
  if (!(sum_length > 1e-6)) return any();
  // The bisector makes half the angle with each normal, whose cosine is half the sum's length.
  return widened(sum / sum_length, 0.5 * sum_length);
}

bool NormalCone::contains(const Vec3& unit_direction, double tolerance) const {
  return is_any() || axis.dot(unit_direction) >= cos_half - tolerance;
}

}  // namespace untangle

#include "edge_edge_distance.hpp"

#include <algorithm>

#include "swept.hpp"

namespace untangle {

void closest_points_of_segments(const Vec3& a0, const Vec3& a1, const Vec3& b0, const Vec3& b1,
                                double& s, double& t) {
  constexpr double kTiny = 1e-20;
  const Vec3 d1 = a1 - a0, d2 = b1 - b0, r = a0 - b0;
  const double a = d1.squaredNorm(), e = d2.squaredNorm(), f = d2.dot(r);
  if (a <= kTiny && e <= kTiny) {
    s = t = 0;
    return;
  }
  if (a <= kTiny) {
    s = 0;
    t = std::clamp(f / e, 0.0, 1.0);
    return;
  }
  const double c = d1.dot(r);
  if (e <= kTiny) {
    t = 0;
    s = std::clamp(-c / a, 0.0, 1.0);
    return;
  }
  const double b = d1.dot(d2), denominator = a * e - b * b;
  // Parallel segments have no unique pair: any s works, take 0 as Ericson does.
  s = denominator > kTiny * a * e ? std::clamp((b * f - c * e) / denominator, 0.0, 1.0) : 0.0;
  t = (b * s + f) / e;
  if (t < 0) {
    t = 0;
    s = std::clamp(-c / a, 0.0, 1.0);
  } else if (t > 1) {
    t = 1;
    s = std::clamp((b - c) / a, 0.0, 1.0);
  }
}

namespace proximity_detail {
namespace {

// Signed distance between the lines of two segments, along their common normal; 0 when parallel.
double line_distance(const Vec3& a0, const Vec3& a1, const Vec3& b0, const Vec3& b1) {
  const Vec3 n = (a1 - a0).cross(b1 - b0);
  const double length = n.norm();
  return length > 0 ? (b0 - a0).dot(n) / length : 0.0;
}

}  // namespace

bool close_inside(const Vec3& a0, const Vec3& a1, const Vec3& b0, const Vec3& b1,
                  double thickness) {
  double s = 0, t = 0;
  closest_points_of_segments(a0, a1, b0, b1, s, t);
  if (s <= 0 || s >= 1 || t <= 0 || t >= 1) return false;
  const Vec3 pa = a0 + s * (a1 - a0);
  const Vec3 pb = b0 + t * (b1 - b0);
  return (pa - pb).squaredNorm() < thickness * thickness;
}

bool edges_pass(const Positions& from, const Positions& x, const std::array<Index, 2>& ea,
                const std::array<Index, 2>& eb, double thickness) {
  const double t = crossing_part(line_distance(from[ea[0]], from[ea[1]], from[eb[0]], from[eb[1]]),
                                 line_distance(x[ea[0]], x[ea[1]], x[eb[0]], x[eb[1]]));
  if (t < 0) return false;
  return close_inside(along(from, x, ea[0], t), along(from, x, ea[1], t), along(from, x, eb[0], t),
                      along(from, x, eb[1], t), thickness);
}

}  // namespace proximity_detail
}  // namespace untangle

// Moller's interval test on the line two triangle planes share: whether the triangles' crossings
// overlap there, and which edges can then hit the other triangle.
#pragma once

#include <array>
#include <cmath>

#include "filters.hpp"

namespace untangle::narrow {

// The interval test runs only where the planes meet at a sine above this: the direction of their
// shared line is then known to about 1e-16 / kMinCrossingSine.
constexpr double kMinCrossingSine = 1e-4;
// The interval test's margin, in multiples of the two ball margins (kBallMargin times the
// extents): far above the rounding of the crossing points, so it never rejects a pair with a hit.
constexpr double kIntervalMargin = 10;

// Where `t` meets the other triangle's plane, projected on `axis` (along the line both planes
// share), relative to `origin`: the two points where its edges from the lone corner cross it,
// and their interval widened by the reach of the hit tolerance. Every corner of t is clearly on
// a side, and not all on the same one.
struct Crossings {
  std::array<double, 2> at;      // where the edges cross
  std::array<unsigned, 2> edge;  // their slots in the triangle (edge k joins corners k, k + 1)
  std::array<double, 2> reach;   // the widened interval, low and high
};

inline Crossings crossings(const TriangleFrame& t, const CornerSides& s, const Vec3& axis,
                           const Vec3& origin) {
  const int k = s.side[0] == s.side[1] ? 2 : (s.side[0] == s.side[2] ? 1 : 0);
  const int m1 = k == 2 ? 0 : k + 1;
  const int m2 = k == 0 ? 2 : k - 1;
  const double pk = axis.dot(t.corners[k] - origin);
  const double p1 = axis.dot(t.corners[m1] - origin);
  const double p2 = axis.dot(t.corners[m2] - origin);
  const double r1 = s.distance[k] / (s.distance[k] - s.distance[m1]);  // along edge k -> m1
  const double r2 = s.distance[k] / (s.distance[k] - s.distance[m2]);
  const double c1 = pk + (p1 - pk) * r1;
  const double c2 = pk + (p2 - pk) * r2;
  // An edge of the other triangle is still a (dropped) hit up to kHitTolerance outside t in
  // barycentric terms. Along the line, m2's coordinate grows from 0 at c1 to r2 at c2: that
  // reach is kHitTolerance |c2 - c1| / r2 beyond c1, long where the line passes close to
  // corner k (and likewise beyond c2).
  const double length = std::abs(c2 - c1);
  const double beyond_c1 = kHitTolerance * length / r2;
  const double beyond_c2 = kHitTolerance * length / r1;
  Crossings out;
  out.at = {c1, c2};
  out.edge = {static_cast<unsigned>(k), static_cast<unsigned>(m2)};
  out.reach = c1 <= c2 ? std::array<double, 2>{c1 - beyond_c1, c2 + beyond_c2}
                       : std::array<double, 2>{c2 - beyond_c2, c1 + beyond_c1};
  return out;
}

// Which edges of each triangle may meet the other (bit k: edge k), by Moller's interval test:
// where both triangles cross the other's plane, an edge of one meets the other only where its
// crossing lies in the other's interval along the line both planes share. On dense tangles most
// candidate pairs do intersect; this leaves the exact test to the two edges that hit instead of
// the four that cross a plane. All edges where the test does not apply.
inline std::array<unsigned, 2> edges_to_test(const TriangleFrame& fa, const CornerSides& a_sides,
                                             const TriangleFrame& fb, const CornerSides& b_sides) {
  constexpr std::array<unsigned, 2> kAll = {7u, 7u};
  if (!all_clearly_placed(a_sides.side) || !all_clearly_placed(b_sides.side)) return kAll;
  const Vec3 axis = fa.normal.cross(fb.normal);
  const double axis2 = axis.squaredNorm();
  // Nearly parallel planes: their shared line is ill-defined, leave them to the edge tests.
  if (!(axis2 >
        kMinCrossingSine * kMinCrossingSine * fa.normal.squaredNorm() * fb.normal.squaredNorm())) {
    return kAll;
  }
  const Vec3& origin = fb.corners[0];
  const Crossings ca = crossings(fa, a_sides, axis, origin);
  const Crossings cb = crossings(fb, b_sides, axis, origin);
  const double margin = kIntervalMargin * std::sqrt(axis2) * (fa.ball_margin + fb.ball_margin);
  auto inside = [margin](double at, const std::array<double, 2>& reach) {
    return at >= reach[0] - margin && at <= reach[1] + margin;
  };
  std::array<unsigned, 2> mask = {0u, 0u};
  for (int i = 0; i < 2; ++i) {
    if (inside(ca.at[i], cb.reach)) mask[0] |= 1u << ca.edge[i];
    if (inside(cb.at[i], ca.reach)) mask[1] |= 1u << cb.edge[i];
  }
  return mask;
}

}  // namespace untangle::narrow

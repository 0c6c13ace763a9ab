// Moller-Trumbore (1997) of a triangle edge against a triangle, as the narrow phase runs it: a
// hit strictly inside the triangle and the edge, else none, or dropped within kHitTolerance of a
// vertex or an edge (SPEC "Narrow phase").
#pragma once

#include "untangle/narrow_phase.hpp"

namespace untangle::narrow {

// Where an edge crosses a triangle: the edge parameter and two barycentrics.
struct EdgeCrossing {
  double t, u, v;
};

// The Hit of edge p0 -> p1 (its lower vertex first) crossing a triangle at `c`.
inline Hit make_hit(const Vec3& p0, const Vec3& p1, Index edge, Index triangle,
                    const EdgeCrossing& c) {
  Hit hit;
  hit.edge = edge;
  hit.triangle = triangle;
  hit.t = c.t;
  const Vec3 dir = p1 - p0;
  hit.point = p0 + c.t * dir;
  const double w = 1 - c.u - c.v;
  hit.barycentric = Vec3(w, c.u, c.v);
  return hit;
}

// intersect_edge_triangle with |(b - a) x (c - a)|^2 given: the narrow phase has it per triangle
// and frame (the same expression, so the same bits).
inline EdgeTriangleResult moller_trumbore(const Vec3& p0, const Vec3& p1, const Vec3& a,
                                          const Vec3& b, const Vec3& c, double normal_squared,
                                          EdgeCrossing& hit) {
  const Vec3 dir = p1 - p0;
  const Vec3 e1 = b - a;
  const Vec3 e2 = c - a;
  const Vec3 pvec = dir.cross(e2);
  const double det = e1.dot(pvec);
  // det = dir . (e1 x e2): compare with |dir| |e1 x e2| for the sine of the edge-plane angle.
  const double plane_scale = dir.squaredNorm() * normal_squared;
  if (!(det * det > kParallelTolerance * kParallelTolerance * plane_scale)) {
    return EdgeTriangleResult::kNone;
  }
  const double inv_det = 1.0 / det;
  const Vec3 s = p0 - a;
  const double u = s.dot(pvec) * inv_det;
  if (u < -kHitTolerance || u > 1 + kHitTolerance) return EdgeTriangleResult::kNone;
  const Vec3 q = s.cross(e1);
  const double v = dir.dot(q) * inv_det;
  if (v < -kHitTolerance || u + v > 1 + kHitTolerance) return EdgeTriangleResult::kNone;
  const double t = e2.dot(q) * inv_det;
  if (t < -kHitTolerance || t > 1 + kHitTolerance) return EdgeTriangleResult::kNone;
  const double w = 1 - u - v;
  if (u <= kHitTolerance || v <= kHitTolerance || w <= kHitTolerance || t <= kHitTolerance ||
      t >= 1 - kHitTolerance) {
    return EdgeTriangleResult::kDropped;
  }
  hit = {t, u, v};
  return EdgeTriangleResult::kHit;
}

}  // namespace untangle::narrow

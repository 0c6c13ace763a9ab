#include "moller_trumbore.hpp"

namespace untangle {

EdgeTriangleResult intersect_edge_triangle(const Vec3& p0, const Vec3& p1, const Vec3& a,
                                           const Vec3& b, const Vec3& c, Hit& hit) {
  narrow::EdgeCrossing crossing;
  const EdgeTriangleResult r =
      narrow::moller_trumbore(p0, p1, a, b, c, (b - a).cross(c - a).squaredNorm(), crossing);
  if (r == EdgeTriangleResult::kHit) {
    const Hit full = narrow::make_hit(p0, p1, hit.edge, hit.triangle, crossing);
    hit.t = full.t;
    hit.point = full.point;
    hit.barycentric = full.barycentric;
  }
  return r;
}

}  // namespace untangle

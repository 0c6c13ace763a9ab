#include "point_triangle_distance.hpp"

#include "swept.hpp"

namespace untangle {

Vec3 closest_point_on_triangle(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c,
                               Vec3& barycentric) {
  const Vec3 ab = b - a, ac = c - a, ap = p - a;
  const double d1 = ab.dot(ap), d2 = ac.dot(ap);
  if (d1 <= 0 && d2 <= 0) {
    barycentric = Vec3(1, 0, 0);
    return a;
  }
  const Vec3 bp = p - b;
  const double d3 = ab.dot(bp), d4 = ac.dot(bp);
  if (d3 >= 0 && d4 <= d3) {
    barycentric = Vec3(0, 1, 0);
    return b;
  }
  // Each edge region asks for an edge of non-zero length (d1 - d3 = |ab|^2, d2 - d6 = |ac|^2,
  // the sum for bc = |bc|^2): two equal corners would give 0 / 0. The other regions hold p then.
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0 && d1 - d3 > 0) {
    const double v = d1 / (d1 - d3);
    barycentric = Vec3(1 - v, v, 0);
    return a + v * ab;
  }
  const Vec3 cp = p - c;
  const double d5 = ab.dot(cp), d6 = ac.dot(cp);
  if (d6 >= 0 && d5 <= d6) {
    barycentric = Vec3(0, 0, 1);
    return c;
  }
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0 && d2 - d6 > 0) {
    const double w = d2 / (d2 - d6);
    barycentric = Vec3(1 - w, 0, w);
    return a + w * ac;
  }
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0 && (d4 - d3) + (d5 - d6) > 0) {
    const double w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
    barycentric = Vec3(0, 1 - w, w);
    return b + w * (c - b);
  }
  const double sum = va + vb + vc;
  if (!(sum > 0)) {  // a degenerate triangle: its first corner is as good as any point
    barycentric = Vec3(1, 0, 0);
    return a;
  }
  const double v = vb / sum, w = vc / sum;
  barycentric = Vec3(1 - v - w, v, w);
  return a + v * ab + w * ac;
}

namespace proximity_detail {
namespace {

// Signed distance of p from the plane of triangle (a, b, c); 0 for a degenerate triangle.
double plane_distance(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c) {
  const Vec3 n = (b - a).cross(c - a);
  const double length = n.norm();
  return length > 0 ? (p - a).dot(n) / length : 0.0;
}

}  // namespace

bool passes_through(const Positions& from, const Positions& x, Index p,
                    const std::array<Index, 3>& tri, double thickness) {
  const double t = crossing_part(plane_distance(from[p], from[tri[0]], from[tri[1]], from[tri[2]]),
                                 plane_distance(x[p], x[tri[0]], x[tri[1]], x[tri[2]]));
  if (t < 0) return false;
  const Vec3 point = along(from, x, p, t);
  Vec3 barycentric;
  const Vec3 q =
      closest_point_on_triangle(point, along(from, x, tri[0], t), along(from, x, tri[1], t),
                                along(from, x, tri[2], t), barycentric);
  return (point - q).squaredNorm() < thickness * thickness;
}

}  // namespace proximity_detail
}  // namespace untangle

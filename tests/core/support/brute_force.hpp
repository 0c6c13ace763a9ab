// Reference answers for the detector, written independently of the production narrow phase:
// the triangle-triangle test is Moller's interval overlap (1997) on plane-side signs, not edge
// rays, and the search is a plain sweep over axis-aligned boxes, not the BVH. Header-only.
#pragma once

#include <algorithm>
#include <array>
#include <limits>
#include <vector>

#include "untangle/mesh.hpp"

namespace untangle::test {

// Whether two triangles cut through each other. Coplanar and touching configurations (a
// corner exactly on the other plane bounding an interval, intervals that only touch) count as
// no intersection: the production code drops such hits too, and random meshes never hit them.
inline bool triangles_intersect(const std::array<Vec3, 3>& a, const std::array<Vec3, 3>& b) {
  const Vec3 nb = (b[1] - b[0]).cross(b[2] - b[0]);
  const Vec3 na = (a[1] - a[0]).cross(a[2] - a[0]);
  std::array<double, 3> da, db;
  for (int i = 0; i < 3; ++i) {
    da[i] = nb.dot(a[i] - b[0]);
    db[i] = na.dot(b[i] - a[0]);
  }
  auto one_side = [](const std::array<double, 3>& d) {
    return (d[0] > 0 && d[1] > 0 && d[2] > 0) || (d[0] < 0 && d[1] < 0 && d[2] < 0) ||
           (d[0] == 0 && d[1] == 0 && d[2] == 0);
  };
  if (one_side(da) || one_side(db)) return false;
  // Both triangles meet the line where the planes cross; compare their intervals on it.
  const Vec3 line = na.cross(nb);
  auto interval = [&line](const std::array<Vec3, 3>& p, const std::array<double, 3>& d) {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    auto take = [&](const Vec3& q) {
      lo = std::min(lo, line.dot(q));
      hi = std::max(hi, line.dot(q));
    };
    for (int i = 0; i < 3; ++i) {
      const int j = (i + 1) % 3;
      if (d[i] == 0) take(p[i]);
      if ((d[i] < 0 && d[j] > 0) || (d[i] > 0 && d[j] < 0)) {
        take(p[i] + (p[j] - p[i]) * (d[i] / (d[i] - d[j])));
      }
    }
    return std::array<double, 2>{lo, hi};
  };
  const auto ia = interval(a, da);
  const auto ib = interval(b, db);
  return std::max(ia[0], ib[0]) < std::min(ia[1], ib[1]);
}

// Every pair of detectable triangles (a < b) sharing no vertex that cut through each other,
// sorted. O(n^2) in the worst case: a sweep on the x extent with a box test before the exact
// test, which changes the cost, not the answer.
inline std::vector<std::array<Index, 2>> brute_force_pairs(const ClothMesh& mesh,
                                                           const Positions& x) {
  struct Box {
    Vec3 lo, hi;
    Index triangle;
  };
  std::vector<Box> boxes;
  for (Index t = 0; t < mesh.triangle_count(); ++t) {
    if (!mesh.triangle_detectable[t]) continue;
    const auto& c = mesh.triangles[t];
    boxes.push_back({x[c[0]].cwiseMin(x[c[1]]).cwiseMin(x[c[2]]),
                     x[c[0]].cwiseMax(x[c[1]]).cwiseMax(x[c[2]]), t});
  }
  std::sort(boxes.begin(), boxes.end(),
            [](const Box& p, const Box& q) { return p.lo.x() < q.lo.x(); });
  std::vector<std::array<Index, 2>> pairs;
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    for (std::size_t j = i + 1; j < boxes.size() && boxes[j].lo.x() <= boxes[i].hi.x(); ++j) {
      const Box& p = boxes[i];
      const Box& q = boxes[j];
      if (p.lo.y() > q.hi.y() || q.lo.y() > p.hi.y() || p.lo.z() > q.hi.z() ||
          q.lo.z() > p.hi.z()) {
        continue;
      }
      const auto& ca = mesh.triangles[p.triangle];
      const auto& cb = mesh.triangles[q.triangle];
      bool shared = false;
      for (Index u : ca) shared = shared || u == cb[0] || u == cb[1] || u == cb[2];
      if (shared) continue;
      if (triangles_intersect({x[ca[0]], x[ca[1]], x[ca[2]]}, {x[cb[0]], x[cb[1]], x[cb[2]]})) {
        pairs.push_back({std::min(p.triangle, q.triangle), std::max(p.triangle, q.triangle)});
      }
    }
  }
  std::sort(pairs.begin(), pairs.end());
  return pairs;
}

}  // namespace untangle::test

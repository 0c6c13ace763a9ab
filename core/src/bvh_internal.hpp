// What the BVH's source files (build, disk topology, refit, projected border, traversal) share.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "untangle/bvh.hpp"

namespace untangle::bvh_detail {

// Refit and the disk precomputation run the subtrees rooted at this depth in parallel (each
// bottom-up, sequentially) and the few nodes above them on one thread: one parallel region per
// pass instead of one per level, which matters on a loaded machine.
inline constexpr std::size_t kSplitDepth = 6;

inline void check_positions(const ClothMesh& mesh, const Positions& positions) {
  if (positions.size() != mesh.vertex_count()) {
    throw std::invalid_argument("Bvh: " + std::to_string(positions.size()) +
                                " positions given for a mesh of " +
                                std::to_string(mesh.vertex_count()) + " vertices");
  }
}

struct Point2 {
  double x, y;
};

}  // namespace untangle::bvh_detail

namespace untangle {

struct Bvh::SweepKey {
  double u_min, u_max;
  Index segment;
};

struct Bvh::BorderScratch {
  std::vector<bvh_detail::Point2> points;  // the loop's corners projected, the first repeated
  std::vector<bvh_detail::Point2> ends;    // per segment, its two ends in its edge's vertex order
  std::vector<SweepKey> keys;
};

}  // namespace untangle

// BVH build: the trees (median split of leaf centroids), the leaves' corners, then the disk
// topology and a first refit.
#include <omp.h>

#include <algorithm>
#include <array>
#include <limits>
#include <stdexcept>

#include "bvh_internal.hpp"

namespace untangle {

using bvh_detail::check_positions;
using bvh_detail::kSplitDepth;

// Subtrees of more leaves than this are built as tasks of their own; smaller ones are not worth
// a task.
constexpr std::size_t kParallelBuildLeaves = 2048;

Bvh::Bvh(const ClothMesh& mesh, const Positions& positions) : mesh_(&mesh) {
  check_positions(mesh, positions);
  const std::size_t leaf_count = mesh.leaves.size();
  std::vector<std::array<double, Kdop18::kAxes>> centroids(leaf_count);
  for (std::size_t l = 0; l < leaf_count; ++l) {
    Vec3 sum = Vec3::Zero();
    int corners = 0;
    for (Index t : mesh.leaves[l]) {
      if (t == kNoIndex) continue;
      for (Index v : mesh.triangles[t]) sum += positions[v];
      corners += 3;
    }
    centroids[l] = Kdop18::project(sum / corners);
  }
  std::vector<std::vector<Index>> piece_leaves(mesh.piece_count());
  for (std::size_t l = 0; l < leaf_count; ++l) {
    piece_leaves[mesh.triangle_piece[mesh.leaves[l][0]]].push_back(static_cast<Index>(l));
  }
  // A subtree of k leaves has 2 k - 1 nodes: every node's index in pre-order is known before
  // its subtree is built, so subtrees are built as parallel tasks into their own ranges.
  std::size_t node_count = 0;
  for (const auto& ids : piece_leaves) {
    roots_.push_back(ids.empty() ? kNoIndex : static_cast<Index>(node_count));
    node_count += ids.empty() ? 0 : 2 * ids.size() - 1;
  }
  nodes_.resize(node_count);
  subtree_end_.resize(node_count);
#pragma omp parallel
#pragma omp single
  for (std::size_t p = 0; p < piece_leaves.size(); ++p) {
    auto& ids = piece_leaves[p];
    if (!ids.empty()) {
      build_node(roots_[p], ids, 0, ids.size(), kNoIndex, static_cast<Index>(p), centroids);
    }
  }
  // Pre-order: a parent comes before its children, so depths follow in one pass.
  std::vector<std::uint8_t> depth(node_count, 0);
  for (std::size_t n = 0; n < node_count; ++n) {
    const Index parent = nodes_[n].parent;
    const std::size_t d = parent == kNoIndex ? 0 : std::size_t{depth[parent]} + 1;
    depth[n] = static_cast<std::uint8_t>(std::min<std::size_t>(d, kSplitDepth + 1));
    if (d < kSplitDepth) top_nodes_.push_back(static_cast<Index>(n));
    if (d == kSplitDepth) subtree_roots_.push_back(static_cast<Index>(n));
  }
  leaf_corners_.resize(leaf_count);
  leaf_second_.assign(leaf_count, kLoneTriangle);
  for (std::size_t l = 0; l < leaf_count; ++l) {
    const auto& first = mesh.triangles[mesh.leaves[l][0]];
    std::array<Index, 4>& corners = leaf_corners_[l];
    corners = {first[0], first[1], first[2], first[0]};
    if (mesh.leaves[l][1] == kNoIndex) continue;
    std::size_t count = 3;
    for (Index v : mesh.triangles[mesh.leaves[l][1]]) {
      if (v == first[0] || v == first[1] || v == first[2]) continue;
      if (count == corners.size()) throw std::logic_error("Bvh: a leaf's triangles share no edge");
      corners[count++] = v;
    }
    // The second triangle's corners in its own order, as slots 0-3 of `corners`, 2 bits each.
    std::uint8_t slots = 0;
    const auto& second = mesh.triangles[mesh.leaves[l][1]];
    for (int k = 2; k >= 0; --k) {
      const auto slot = std::find(corners.begin(), corners.end(), second[k]) - corners.begin();
      slots = static_cast<std::uint8_t>((slots << 2) | slot);
    }
    leaf_second_[l] = slots;
  }
  traversal_nodes_.resize(nodes_.size());
  for (std::size_t n = 0; n < nodes_.size(); ++n) {
    traversal_nodes_[n].left = nodes_[n].left;
    traversal_nodes_[n].right = nodes_[n].right;
    traversal_nodes_[n].leaf = nodes_[n].leaf;
  }
  find_disks();
  refit(positions, 0.0);
}

void Bvh::build_node(Index index, std::vector<Index>& leaf_ids, std::size_t begin, std::size_t end,
                     Index parent, Index piece,
                     const std::vector<std::array<double, Kdop18::kAxes>>& centroids) {
  BvhNode& node = nodes_[index];
  node.parent = parent;
  node.piece = piece;
  subtree_end_[index] = index + static_cast<Index>(2 * (end - begin) - 1);
  if (end - begin == 1) {
    node.leaf = leaf_ids[begin];
    return;
  }
  std::array<double, Kdop18::kAxes> lo, hi;
  lo.fill(std::numeric_limits<double>::infinity());
  hi.fill(-std::numeric_limits<double>::infinity());
  for (std::size_t i = begin; i < end; ++i) {
    const auto& c = centroids[leaf_ids[i]];
    for (int k = 0; k < Kdop18::kAxes; ++k) {
      lo[k] = std::min(lo[k], c[k]);
      hi[k] = std::max(hi[k], c[k]);
    }
  }
  int axis = 0;
  for (int k = 1; k < Kdop18::kAxes; ++k) {
    if (hi[k] - lo[k] > hi[axis] - lo[axis]) axis = k;
  }
  const std::size_t middle = begin + (end - begin) / 2;
  // Ties broken by leaf index: the split is a pure function of the input.
  std::nth_element(leaf_ids.begin() + static_cast<std::ptrdiff_t>(begin),
                   leaf_ids.begin() + static_cast<std::ptrdiff_t>(middle),
                   leaf_ids.begin() + static_cast<std::ptrdiff_t>(end), [&](Index a, Index b) {
                     const double ca = centroids[a][axis], cb = centroids[b][axis];
                     return ca < cb || (ca == cb && a < b);
                   });
  const Index left = index + 1;
  const Index right = index + static_cast<Index>(2 * (middle - begin));
  node.left = left;
  node.right = right;
  // Shared explicitly: a reference left firstprivate (the default of a task) copies its object.
#pragma omp task if (middle - begin > kParallelBuildLeaves) default(none) \
    shared(leaf_ids, centroids) firstprivate(left, begin, middle, index, piece)
  build_node(left, leaf_ids, begin, middle, index, piece, centroids);
  build_node(right, leaf_ids, middle, end, index, piece, centroids);
}

}  // namespace untangle

// BVH build: the leaves' corners and centroids, the trees (median split of leaf centroids) with
// their volumes and cones, then the disk topology and the culling flags.
#include <omp.h>

#include <algorithm>
#include <array>
#include <limits>
#include <memory>
#include <stdexcept>

#include "bvh_internal.hpp"
#include "parallel_errors.hpp"

namespace untangle {

using bvh_detail::check_positions;
using bvh_detail::kSplitDepth;

// Subtrees of more leaves than this are built as tasks of their own; smaller ones are not worth
// a task.
constexpr std::size_t kParallelBuildLeaves = 2048;

Bvh::Bvh(const ClothMesh& mesh, const Positions& positions) : mesh_(&mesh) {
  check_positions(mesh, positions);
  const std::size_t leaf_count = mesh.leaves.size();
  const auto leaves = static_cast<std::ptrdiff_t>(leaf_count);
  // Per leaf, written once by the loop below (no zeroing pass first).
  const std::unique_ptr<Centroid[]> centroids(new Centroid[leaf_count]);
  leaf_corners_.resize(leaf_count);
  leaf_second_.resize(leaf_count);
  ParallelErrors errors;
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t l = 0; l < leaves; ++l) {
    const Leaf& leaf = mesh.leaves[l];
    Vec3 sum = Vec3::Zero();
    int corners = 0;
    for (Index t : leaf) {
      if (t == kNoIndex) continue;
      for (Index v : mesh.triangles[t]) sum += positions[v];
      corners += 3;
    }
    centroids[l] = Kdop18::project(sum / corners);
    // The leaf's distinct corners, the first triangle's in its order, the second's fourth.
    const auto& first = mesh.triangles[leaf[0]];
    std::array<Index, 4>& c = leaf_corners_[l];
    c = {first[0], first[1], first[2], first[0]};
    leaf_second_[l] = kLoneTriangle;
    if (leaf[1] == kNoIndex) continue;
    std::size_t count = 3;
    bool shares_edge = true;
    for (Index v : mesh.triangles[leaf[1]]) {
      if (v == first[0] || v == first[1] || v == first[2]) continue;
      if (count == c.size()) {
        shares_edge = false;
        break;
      }
      c[count++] = v;
    }
    if (!shares_edge) {
      errors.run([] { throw std::logic_error("Bvh: a leaf's triangles share no edge"); });
      continue;
    }
    // The second triangle's corners in its own order, as slots 0-3 of `c`, 2 bits each.
    std::uint8_t slots = 0;
    const auto& second = mesh.triangles[leaf[1]];
    for (int k = 2; k >= 0; --k) {
      const auto slot = std::find(c.begin(), c.end(), second[k]) - c.begin();
      slots = static_cast<std::uint8_t>((slots << 2) | slot);
    }
    leaf_second_[l] = slots;
  }
  errors.rethrow();
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
  traversal_nodes_.resize(node_count);
  subtree_end_.resize(node_count);
  // Each node's volume and cone are made as its subtree is finished: the nodes are touched in
  // one pass, by the thread that built them, instead of a build and then a refit over them all.
#pragma omp parallel
#pragma omp single
  for (std::size_t p = 0; p < piece_leaves.size(); ++p) {
    auto& ids = piece_leaves[p];
    if (!ids.empty()) {
      build_node(roots_[p], ids, 0, ids.size(), kNoIndex, static_cast<Index>(p), centroids.get(),
                 positions);
    }
  }
  for (Index root : roots_) {
    if (root != kNoIndex) collect_split(root, 0);
  }
  find_disks();
  update_culling(positions);
}

// Pre-order: a node's index comes before its children's, so this visits them in index order.
void Bvh::collect_split(Index n, std::size_t depth) {
  if (depth == kSplitDepth) {
    subtree_roots_.push_back(n);
    return;
  }
  top_nodes_.push_back(n);
  if (nodes_[n].is_leaf()) return;
  collect_split(nodes_[n].left, depth + 1);
  collect_split(nodes_[n].right, depth + 1);
}

void Bvh::build_node(Index index, std::vector<Index>& leaf_ids, std::size_t begin, std::size_t end,
                     Index parent, Index piece, const Centroid* centroids,
                     const Positions& positions) {
  BvhNode& node = nodes_[index];
  BvhTraversalNode& packed = traversal_nodes_[index];
  node.parent = parent;
  node.piece = piece;
  subtree_end_[index] = index + static_cast<Index>(2 * (end - begin) - 1);
  if (end - begin == 1) {
    node.leaf = packed.leaf = leaf_ids[begin];
    refit_node(index, positions, 0.0);
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
  node.left = packed.left = left;
  node.right = packed.right = right;
  // Shared explicitly: a reference left firstprivate (the default of a task) copies its object.
#pragma omp task if (middle - begin > kParallelBuildLeaves) default(none) \
    shared(leaf_ids, positions) firstprivate(left, begin, middle, index, piece, centroids)
  build_node(left, leaf_ids, begin, middle, index, piece, centroids, positions);
  build_node(right, leaf_ids, middle, end, index, piece, centroids, positions);
#pragma omp taskwait
  refit_node(index, positions, 0.0);
}

}  // namespace untangle

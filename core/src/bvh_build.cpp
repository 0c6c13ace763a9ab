// BVH build: the leaves' corners and centroids, the trees (median split of leaf centroids) with
// their volumes and cones, then the disk topology and the culling flags.
#include <omp.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#include "bvh_internal.hpp"
#include "parallel_errors.hpp"

namespace untangle {

using bvh_detail::check_positions;
using bvh_detail::kSplitDepth;

// Subtrees of more leaves than this are built as tasks of their own; smaller ones are not worth
// a task.
constexpr std::size_t kParallelBuildLeaves = 2048;

// Nodes of fewer leaves are split by position alone: the walk over their parts costs more at
// build than the few leaf pairs their self tests can save (the walks of all nodes above cost a
// pass over the leaves per level; these would add five more levels).
constexpr std::size_t kMinLeavesForParts = 32;

// The most leaves one leaf shares an edge with: two triangles, three edges each.
constexpr std::size_t kMaxLeafNeighbours = 6;

// What every node's split reads: per leaf, its centroid projected on the 18-DOP axes and the
// leaves it shares an edge with; and per leaf a stamp that the split of the node holding it
// writes (the nodes being split at one time hold disjoint leaves).
struct Bvh::BuildContext {
  using Centroid = std::array<double, Kdop18::kAxes>;
  std::unique_ptr<Centroid[]> centroids;
  std::unique_ptr<std::array<Index, kMaxLeafNeighbours>[]> neighbours;  // kNoIndex after the last
  // 2 n: in the leaves of node n, not yet reached by its component walk; 2 n + 1: reached;
  // kNotStamped before any walk, so that no leaf outside a node can pass for one of its own.
  static constexpr std::uint64_t kNotStamped = ~std::uint64_t{0};
  std::unique_ptr<std::uint64_t[]> stamp;
  std::unique_ptr<Index[]> position;  // where a leaf is in the leaves of the node being split
  const Positions* positions;
  ParallelErrors errors;  // a split's lists, allocated inside the build's tasks
};

namespace {

// Reorders `leaves` (a node's) into its connected parts through shared edges, one after the
// other, each in walk order, and returns where each part after the first begins: nothing when
// they are one part, the usual case, which allocates nothing. Each leaf's stamp and position
// are written (the node's own leaves only).
std::vector<std::size_t> split_components(std::span<Index> leaves, std::uint64_t node,
                                          const std::array<Index, kMaxLeafNeighbours>* neighbours,
                                          std::uint64_t* stamp, Index* position) {
  const std::uint64_t inside = 2 * node, reached = 2 * node + 1;
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    stamp[leaves[i]] = inside;
    position[leaves[i]] = static_cast<Index>(i);
  }
  // [0, walked): done; [walked, found): reached, their neighbours still to look at; the rest
  // not reached yet. A reached leaf is swapped to `found`.
  std::vector<std::size_t> starts;
  std::size_t walked = 0, found = 0;
  while (found < leaves.size()) {
    if (walked == found) {  // a new part, from the first leaf not reached
      if (found > 0) starts.push_back(found);
      stamp[leaves[found]] = reached;
      ++found;
    }
    for (Index m : neighbours[leaves[walked++]]) {
      if (m == kNoIndex) break;
      if (stamp[m] != inside) continue;
      stamp[m] = reached;
      const Index at = position[m];
      std::swap(leaves[at], leaves[found]);
      position[leaves[at]] = at;
      position[m] = static_cast<Index>(found);
      ++found;
    }
  }
  return starts;
}

}  // namespace

Bvh::Bvh(const ClothMesh& mesh, const Positions& positions) : mesh_(&mesh) {
  check_positions(mesh, positions);
  const std::size_t leaf_count = mesh.leaves.size();
  const auto leaves = static_cast<std::ptrdiff_t>(leaf_count);
  // Per leaf, written once by the loop below (no zeroing pass first).
  BuildContext context;
  context.centroids.reset(new BuildContext::Centroid[leaf_count]);
  context.neighbours.reset(new std::array<Index, kMaxLeafNeighbours>[leaf_count]);
  context.stamp.reset(new std::uint64_t[leaf_count]);
  std::fill_n(context.stamp.get(), leaf_count, BuildContext::kNotStamped);
  context.position.reset(new Index[leaf_count]);
  context.positions = &positions;
  BuildContext::Centroid* centroids = context.centroids.get();
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
    // The leaves across its triangles' edges (the first two triangles of a non-manifold edge).
    auto& near = context.neighbours[l];
    near.fill(kNoIndex);
    std::size_t near_count = 0;
    for (Index t : leaf) {
      if (t == kNoIndex) continue;
      for (Index e : mesh.triangle_edges[t]) {
        for (Index other : mesh.edges[e].triangles) {
          if (other == kNoIndex) continue;
          const Index m = mesh.triangle_leaf[other];
          if (m != static_cast<Index>(l) && near_count < near.size()) near[near_count++] = m;
        }
      }
    }
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
      build_node(roots_[p], ids, 0, ids.size(), kNoIndex, static_cast<Index>(p), context);
    }
  }
  context.errors.rethrow();
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
                     Index parent, Index piece, BuildContext& context) {
  const Positions& positions = *context.positions;
  const BuildContext::Centroid* centroids = context.centroids.get();
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
  const auto first = leaf_ids.begin() + static_cast<std::ptrdiff_t>(begin);
  // A node whose leaves fall apart into several parts (a cut through a fold, two layers of a
  // collapsed tube) is not a disk, so it is never culled, and neither are its descendants
  // while they keep pieces of several parts: the self tests of their children then descend
  // along every border between them. Split apart first, each part can be a disk and be culled;
  // only the tests between the parts remain. The parts go to the two sides in the order of their
  // mean centroid on the longest axis, cut where the counts come closest to halves.
  std::size_t middle = begin + (end - begin) / 2;
  std::vector<std::size_t> starts;
  context.errors.run([&] {
    if (end - begin < kMinLeavesForParts) return;
    starts = split_components({&*first, end - begin}, index, context.neighbours.get(),
                              context.stamp.get(), context.position.get());
    if (starts.empty()) return;
    starts.insert(starts.begin(), 0);
    starts.push_back(end - begin);
    const std::size_t parts = starts.size() - 1;
    std::vector<std::pair<double, std::size_t>> order(parts);
    for (std::size_t p = 0; p < parts; ++p) {
      double sum = 0;
      for (std::size_t i = starts[p]; i < starts[p + 1]; ++i) sum += centroids[first[i]][axis];
      order[p] = {sum / static_cast<double>(starts[p + 1] - starts[p]), p};
    }
    std::sort(order.begin(), order.end());
    // Cut before the part that takes the running count past half (after it when that is the
    // first part): both sides keep at least one part.
    auto size = [&](std::size_t k) {
      return starts[order[k].second + 1] - starts[order[k].second];
    };
    std::size_t count = size(0), cut = 1;
    while (cut + 1 < parts && 2 * (count + size(cut)) <= end - begin) count += size(cut++);
    const std::vector<Index> walked(first, first + static_cast<std::ptrdiff_t>(end - begin));
    auto out = first;
    for (const auto& [key, p] : order) {
      out = std::copy(walked.begin() + static_cast<std::ptrdiff_t>(starts[p]),
                      walked.begin() + static_cast<std::ptrdiff_t>(starts[p + 1]), out);
    }
    middle = begin + count;
  });
  if (context.errors.failed()) return;  // the constructor throws once the tasks are done
  if (starts.empty()) {
    // Ties broken by leaf index: the split is a pure function of the input.
    std::nth_element(leaf_ids.begin() + static_cast<std::ptrdiff_t>(begin),
                     leaf_ids.begin() + static_cast<std::ptrdiff_t>(middle),
                     leaf_ids.begin() + static_cast<std::ptrdiff_t>(end), [&](Index a, Index b) {
                       const double ca = centroids[a][axis], cb = centroids[b][axis];
                       return ca < cb || (ca == cb && a < b);
                     });
  }
  const Index left = index + 1;
  const Index right = index + static_cast<Index>(2 * (middle - begin));
  node.left = packed.left = left;
  node.right = packed.right = right;
  // Shared explicitly: a reference left firstprivate (the default of a task) copies its object.
#pragma omp task if (middle - begin > kParallelBuildLeaves) default(none) \
    shared(leaf_ids, context) firstprivate(left, begin, middle, index, piece)
  build_node(left, leaf_ids, begin, middle, index, piece, context);
  build_node(right, leaf_ids, middle, end, index, piece, context);
#pragma omp taskwait
  refit_node(index, positions, 0.0);
}

}  // namespace untangle

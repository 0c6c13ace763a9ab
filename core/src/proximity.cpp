// ProximitySearch::find: the volumes of a search and the parallel tests of the leaf pairs. The
// rest lives in core/src/proximity/: the leaves' parts (leaf_parts), the neighbour rules as masks
// (neighbour_masks), the walk of the trees (tree_walk), reuse of a walk between searches (reuse),
// the tests of one leaf pair (leaf_tests) and the distances they use (point_triangle_distance,
// edge_edge_distance).
#include "untangle/proximity.hpp"

#include <omp.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "parallel_errors.hpp"
#include "proximity/internal.hpp"

namespace untangle {

using proximity_detail::find_leaf_parts;
using proximity_detail::kParallelLeafPairs;
using proximity_detail::meet;
using proximity_detail::sort_unique;

ProximitySearch::ProximitySearch(const Bvh& bvh)
    : bvh_(&bvh), parts_(find_leaf_parts(bvh.mesh())), volumes_(bvh.nodes().size()) {
  nodes_.reserve(bvh.nodes().size());
  for (const BvhNode& node : bvh.nodes()) {
    if (node.leaf != kNoIndex) leaf_nodes_.push_back(static_cast<Index>(nodes_.size()));
    nodes_.push_back({node.left, node.right, node.leaf});
  }
  find_skips();
}

const ProximityPairs& ProximitySearch::find(const Positions& x, double thickness, bool ring_pairs,
                                            const Positions* from) {
  if (x.size() != bvh_->mesh().vertex_count() || (from != nullptr && from->size() != x.size())) {
    throw std::invalid_argument("ProximitySearch::find: " + std::to_string(x.size()) +
                                " positions for a mesh of " +
                                std::to_string(bvh_->mesh().vertex_count()) + " vertices");
  }
  from_ = from;
  result_.point_triangle.clear();
  result_.edge_edge.clear();
  if (!(thickness > 0)) return result_;
  walk_or_reuse(x, thickness, ring_pairs, from);

  found_.resize(static_cast<std::size_t>(std::max(1, omp_get_max_threads())));
  stacks_.resize(found_.size());
  current_volumes_.resize(nodes_.size());
  for (ProximityPairs& part : found_) {
    part.point_triangle.clear();
    part.edge_edge.clear();
  }
  const ClothMesh& mesh = bvh_->mesh();
  static const Kdop18f empty_volume{Kdop18()};  // meets nothing
  leaf_boxes_.resize(parts_.size());
  PrimitiveVolumes& volumes = primitive_volumes_;
  volumes.vertices.resize(x.size());
  volumes.triangles.resize(mesh.triangles.size());
  volumes.edges.resize(mesh.edges.size());
  const auto vertex_count = static_cast<std::ptrdiff_t>(x.size());
  const auto triangle_count = static_cast<std::ptrdiff_t>(mesh.triangles.size());
  const auto edge_count = static_cast<std::ptrdiff_t>(mesh.edges.size());
  const auto leaf_pair_count = static_cast<std::ptrdiff_t>(leaf_pairs_.size());
  const auto leaf_count = static_cast<std::ptrdiff_t>(parts_.size());
  ParallelErrors errors;  // the pairs found grow per-thread lists
#pragma omp parallel if (leaf_pairs_.size() >= kParallelLeafPairs)
  {
    // Only the vertices' volumes are rounded to floats; those of the leaves, triangles and edges
    // are exact merges of their corners'.
#pragma omp for schedule(static)
    for (std::ptrdiff_t v = 0; v < vertex_count; ++v) {
      Kdop18 volume;
      volume.add(x[v]);
      if (from != nullptr) volume.add((*from)[v]);  // the whole way, for the swept tests
      volume.inflate(0.5 * thickness);
      volumes.vertices[v] = Kdop18f(volume);
    }
#pragma omp for schedule(static) nowait
    for (std::ptrdiff_t leaf = 0; leaf < leaf_count; ++leaf) {
      const LeafParts& parts = parts_[leaf];
      Kdop18f& box = leaf_boxes_[leaf];
      box = parts.vertex_count > 0 ? volumes.vertices[parts.vertices[0]] : empty_volume;
      for (int i = 1; i < parts.vertex_count; ++i) box.merge(volumes.vertices[parts.vertices[i]]);
    }
#pragma omp for schedule(static) nowait
    for (std::ptrdiff_t t = 0; t < triangle_count; ++t) {
      const auto& tri = mesh.triangles[t];
      volumes.triangles[t] = volumes.vertices[tri[0]];
      volumes.triangles[t].merge(volumes.vertices[tri[1]]);
      volumes.triangles[t].merge(volumes.vertices[tri[2]]);
    }
#pragma omp for schedule(static)
    for (std::ptrdiff_t e = 0; e < edge_count; ++e) {
      const auto& ends = mesh.edges[e].vertices;
      volumes.edges[e] = volumes.vertices[ends[0]];
      volumes.edges[e].merge(volumes.vertices[ends[1]]);
    }
    // The leaves that moved beyond the margin since the walk are looked up on the trees at the
    // current volumes: that finds all their pairs, so the walk's list below skips them.
    if (!moved_leaves_.empty()) {
#pragma omp single
      {
        for (std::size_t k = 0; k < leaf_nodes_.size(); ++k) {
          current_volumes_[leaf_nodes_[k]] = leaf_boxes_[nodes_[leaf_nodes_[k]].leaf];
        }
        for (std::size_t n = nodes_.size(); n-- > 0;) {
          const Node& node = nodes_[n];
          if (node.leaf != kNoIndex) continue;
          current_volumes_[n] = current_volumes_[node.left];
          current_volumes_[n].merge(current_volumes_[node.right]);
        }
      }
      const auto moved_count = static_cast<std::ptrdiff_t>(moved_leaves_.size());
      const auto thread = static_cast<std::size_t>(omp_get_thread_num());
#pragma omp for schedule(dynamic, 16) nowait
      for (std::ptrdiff_t k = 0; k < moved_count; ++k) {
        errors.run([&] {
          look_up(moved_leaves_[k], x, thickness, ring_pairs, stacks_[thread], found_[thread]);
        });
      }
    }
#pragma omp for schedule(dynamic, 64)
    for (std::ptrdiff_t k = 0; k < leaf_pair_count; ++k) {
      const CloseLeafPair& pair = leaf_pairs_[k];
      if (!moved_leaves_.empty() && (leaf_moved_[pair.a] || leaf_moved_[pair.b])) continue;
      if (!meet(leaf_boxes_[pair.a], leaf_boxes_[pair.b])) continue;
      errors.run([&] {
        LiveTests& tests = live_[k];
        if (!tests.known) tests = live_tests(pair.a, pair.b, ring_pairs);
        if (tests.points_a == 0 && tests.points_b == 0 && tests.edges == 0) return;
        test_leaves(pair, tests, x, thickness,
                    found_[static_cast<std::size_t>(omp_get_thread_num())]);
      });
    }
  }
  errors.rethrow();
  // Which thread found a pair varies; sorting makes the result independent of that.
  for (const ProximityPairs& part : found_) {
    result_.point_triangle.insert(result_.point_triangle.end(), part.point_triangle.begin(),
                                  part.point_triangle.end());
    result_.edge_edge.insert(result_.edge_edge.end(), part.edge_edge.begin(), part.edge_edge.end());
  }
  sort_unique(result_.point_triangle);
  sort_unique(result_.edge_edge);
  return result_;
}

}  // namespace untangle

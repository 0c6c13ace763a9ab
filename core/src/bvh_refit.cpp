// BVH refit: volumes, normal cones and the culling flag, bottom-up each frame, keeping the
// tree's shape.
#include <omp.h>

#include <cmath>
#include <string>

#include "bvh_internal.hpp"
#include "parallel_errors.hpp"

namespace untangle {

using bvh_detail::check_positions;

// Reads the leaf's corners only (its triangles are slots of them): one lookup fewer between the
// node and the positions than through the mesh's leaves and triangles.
void Bvh::refit_leaf(Index n, const Positions& positions, double inflation) {
  const BvhNode& node = nodes_[n];
  const std::array<Index, 4>& corners = leaf_corners_[node.leaf];
  const std::uint8_t second = leaf_second_[node.leaf];
  const std::array<const Vec3*, 4> p = {&positions[corners[0]], &positions[corners[1]],
                                        &positions[corners[2]], &positions[corners[3]]};
  // The corners projected on the 9 axes straight into a volume on the stack: no empty volume to
  // start from, one pass per corner (a lone triangle's repeated corner changes no bit). Only its
  // rounding outwards to floats is stored.
  Kdop18 volume;
  const auto d0 = Kdop18::project(*p[0]);
  volume.min = d0;
  volume.max = d0;
  for (std::size_t c = 1; c < p.size(); ++c) volume.add(*p[c]);
  if (inflation > 0) volume.inflate(inflation);
  traversal_nodes_[n].volume = Kdop18f(volume);
  // The first triangle is corners 0, 1, 2 in its own order.
  NormalCone cone = NormalCone::from_triangle(*p[0], *p[1], *p[2]);
  if (second != kLoneTriangle) {
    cone = NormalCone::of_two(cone, NormalCone::from_triangle(*p[second & 3], *p[(second >> 2) & 3],
                                                              *p[(second >> 4) & 3]));
  }
  nodes_[n].cone = cone;
}

void Bvh::refit_node(Index n, const Positions& positions, double inflation) {
  BvhNode& node = nodes_[n];
  Kdop18f& volume = traversal_nodes_[n].volume;
  if (node.is_leaf()) {
    refit_leaf(n, positions, inflation);
  } else {
    volume.merge(traversal_nodes_[node.left].volume, traversal_nodes_[node.right].volume);
    // A cone of 90 degrees or more only says "not cullable", and so does every cone that
    // contains it: such parents get any() without the work of a merge.
    const NormalCone& a = nodes_[node.left].cone;
    const NormalCone& b = nodes_[node.right].cone;
    node.cone = a.narrower_than_right_angle() && b.narrower_than_right_angle()
                    ? NormalCone::merge(a, b)
                    : NormalCone::any();
  }
  traversal_nodes_[n].size = (volume.max[0] - volume.min[0]) + (volume.max[1] - volume.min[1]) +
                             (volume.max[2] - volume.min[2]);
}

void Bvh::refit(const Positions& positions, double inflation) {
  check_positions(*mesh_, positions);
  if (!(inflation >= 0) || !std::isfinite(inflation)) {
    throw std::invalid_argument("Bvh::refit: inflation must be finite and >= 0, got " +
                                std::to_string(inflation));
  }
  inflation_ = inflation;
#pragma omp parallel for schedule(dynamic, 1)
  for (std::size_t i = 0; i < subtree_roots_.size(); ++i) {
    for (Index n = subtree_end_[subtree_roots_[i]]; n-- > subtree_roots_[i];) {
      refit_node(n, positions, inflation);
    }
  }
  for (std::size_t i = top_nodes_.size(); i-- > 0;) refit_node(top_nodes_[i], positions, inflation);
  update_culling(positions);
}

void Bvh::update_culling(const Positions& positions) {
  // Top-down, so a region inside a cullable one inherits the flag without its own border test
  // (a part of a surface that does not intersect itself does not either).
  auto cull_node = [&](Index n, BorderScratch& scratch) {
    BvhNode& node = nodes_[n];
    if (node.parent != kNoIndex && nodes_[node.parent].cullable) {
      node.cullable = true;
    } else if (node.is_leaf()) {
      node.cullable = false;  // never self-tested (its triangles share an edge): no border test
    } else {
      node.cullable = node_is_disk_[n] && node.cone.narrower_than_right_angle() &&
                      border_is_simple_in_projection(n, positions, scratch);
    }
  };
  BorderScratch scratch;  // reused across the nodes of one thread's loop
  for (Index n : top_nodes_) cull_node(n, scratch);
  ParallelErrors errors;  // the border tests grow their scratch lists
#pragma omp parallel for schedule(dynamic, 1)
  for (std::size_t i = 0; i < subtree_roots_.size(); ++i) {
    errors.run([&] {
      BorderScratch subtree_scratch;
      for (Index n = subtree_roots_[i]; n < subtree_end_[subtree_roots_[i]]; ++n) {
        cull_node(n, subtree_scratch);
      }
    });
  }
  errors.rethrow();
}

}  // namespace untangle

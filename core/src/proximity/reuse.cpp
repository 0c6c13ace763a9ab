// Reuse between searches: the leaf pairs of a walk are tested again while the particles stay
// within a margin of where the walk saw them; the few leaves that moved farther are looked up on
// the trees at their current volumes.
#include "internal.hpp"

namespace untangle {
namespace {

using proximity_detail::kParallelLeaves;
using proximity_detail::meet;

// The volumes are inflated by kReuseMargin times the thickness beyond what a search needs, so
// the leaf pairs they give stay valid for the leaves whose particles have moved less than that
// since: the searches until then only test those pairs again, and look up the few leaves that
// moved farther on the trees at their current volumes. A larger margin walks less often but keeps
// more leaf pairs, most of which the box test of the search then skips; in a crushed pile that
// list grows with the cube of the margin, and skipping it costs more than the extra walks
// (docs/untangler.md, "Time on piles").
constexpr double kReuseMargin = 1.5;
// Once more than this share of the leaves have moved beyond the margin, the trees are walked
// again: looking up each such leaf would cost more. (On a cache bake either a few leaves move that
// far or, at a new cache frame, all of them, so the share matters little.)
constexpr std::size_t kWalkWhenMovedLeavesPerLeaf = 8;

}  // namespace

void ProximitySearch::walk_or_reuse(const Positions& x, double thickness, bool ring_pairs,
                                    const Positions* from) {
  const double margin = kReuseMargin * thickness;
  bool walk = thickness != walked_thickness_ || walked_positions_.size() != x.size() ||
              (from != nullptr) != walked_swept_;
  if (!walk) {
    find_moved_leaves(x, margin);
    walk = moved_leaves_.size() * kWalkWhenMovedLeavesPerLeaf > parts_.size();
  }
  if (walk) {
    // A walk that throws (out of memory) must leave nothing a later search would trust.
    walked_positions_.clear();
    live_.clear();
    // Two primitives closer than the thickness are closer than that along every axis; each moves
    // less than the margin until the next walk, or its leaf is looked up.
    find_leaf_pairs(x, 0.5 * thickness + margin);
    walked_positions_ = x;
    walked_thickness_ = thickness;
    walked_swept_ = from != nullptr;
    if (from != nullptr) walked_from_ = *from;
    moved_leaves_.clear();
    live_.clear();
  }
  if (live_.empty() || ring_pairs != live_ring_pairs_) {
    live_.assign(leaf_pairs_.size(), LiveTests{});
    live_ring_pairs_ = ring_pairs;
  }
}

void ProximitySearch::find_moved_leaves(const Positions& x, double margin) {
  const auto vertex_count = static_cast<std::ptrdiff_t>(x.size());
  vertex_moved_.resize(x.size());
  const double limit = margin * margin;
#pragma omp parallel for schedule(static) if (vertex_count >= kParallelLeaves)
  for (std::ptrdiff_t v = 0; v < vertex_count; ++v) {
    vertex_moved_[v] =
        !((x[v] - walked_positions_[v]).squaredNorm() < limit) ||
        (from_ != nullptr && !(((*from_)[v] - walked_from_[v]).squaredNorm() < limit));
  }
  leaf_moved_.assign(parts_.size(), 0);
  moved_leaves_.clear();
  for (std::size_t leaf = 0; leaf < parts_.size(); ++leaf) {
    const LeafParts& parts = parts_[leaf];
    for (int i = 0; i < parts.vertex_count; ++i) {
      if (vertex_moved_[parts.vertices[i]]) {
        leaf_moved_[leaf] = 1;
        moved_leaves_.push_back(static_cast<Index>(leaf));
        break;
      }
    }
  }
}

void ProximitySearch::look_up(Index leaf, const Positions& x, double thickness, bool ring_pairs,
                              std::vector<Index>& stack, ProximityPairs& out) const {
  const Kdop18f& box = leaf_boxes_[leaf];
  stack.clear();
  for (Index root : bvh_->roots()) {
    if (root != kNoIndex) stack.push_back(root);
  }
  while (!stack.empty()) {
    const Index n = stack.back();
    stack.pop_back();
    if (!meet(current_volumes_[n], box)) continue;
    const Node& node = nodes_[n];
    if (node.leaf == kNoIndex) {
      stack.push_back(node.left);
      stack.push_back(node.right);
      continue;
    }
    // Two moved leaves meet in the look-up of the first; a leaf is not paired with itself.
    const Index other = node.leaf;
    if (other == leaf || (leaf_moved_[other] && other < leaf)) continue;
    const CloseLeafPair pair{std::min(leaf, other), std::max(leaf, other)};
    const LiveTests tests = live_tests(pair.a, pair.b, ring_pairs);
    if (tests.points_a != 0 || tests.points_b != 0 || tests.edges != 0) {
      test_leaves(pair, tests, x, thickness, out);
    }
  }
}

}  // namespace untangle

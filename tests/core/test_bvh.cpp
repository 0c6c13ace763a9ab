// Bvh build, refit and traversal: completeness of the traversal against all leaf pairs,
// culling never loses a pair, refit, and thread-count independence. The projected-border test
// is in test_bvh_border.cpp, the disk precomputation in test_bvh_disks.cpp.
#include "untangle/bvh.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "support/brute_force.hpp"
#include "support/crumpled_mesh.hpp"
#include "untangle/narrow_phase.hpp"

namespace untangle {
namespace {

std::vector<PolygonMesh> crumpled(int n, int pieces, int folds, std::uint64_t seed) {
  test::CrumpleOptions o;
  o.nx = o.ny = n;
  o.folds = folds;
  o.seed = seed;
  return test::crumpled_pieces(o, pieces);
}

std::set<LeafPair> as_set(const std::vector<LeafPair>& pairs) {
  return {pairs.begin(), pairs.end()};
}

// Without culling the traversal returns exactly the leaf pairs whose 18-DOPs overlap, each
// once. The reference tests every pair of leaves, with volumes built here from the vertices.
TEST(Bvh, CandidatesAreExactlyTheOverlappingLeafPairs) {
  for (int pieces = 1; pieces <= 2; ++pieces) {
    const auto input = crumpled(16, pieces, 2, 40 + pieces);
    const ClothMesh mesh = ClothMesh::build(input);
    const Positions x = test::concatenated_positions(input);
    const double inflation = 0.01;
    Bvh bvh(mesh, x);
    bvh.refit(x, inflation);
    const Candidates c = bvh.find_candidates(false);
    std::vector<Kdop18> volumes(mesh.leaves.size());
    for (std::size_t l = 0; l < mesh.leaves.size(); ++l) {
      for (Index t : mesh.leaves[l]) {
        if (t == kNoIndex) continue;
        for (Index v : mesh.triangles[t]) volumes[l].add(x[v]);
      }
      volumes[l].inflate(inflation);
    }
    std::set<LeafPair> expected;
    for (Index a = 0; a < volumes.size(); ++a) {
      for (Index b = a + 1; b < volumes.size(); ++b) {
        if (volumes[a].overlaps(volumes[b])) expected.insert({a, b});
      }
    }
    EXPECT_EQ(c.leaf_pairs.size(), expected.size()) << "no pair twice";
    EXPECT_EQ(as_set(c.leaf_pairs), expected);
    EXPECT_TRUE(c.culled_nodes.empty());
  }
}

// Culling only skips regions that cannot intersect themselves: the intersecting pairs with
// and without it are the same, on meshes where it does cull something.
TEST(Bvh, CullingNeverLosesAPair) {
  std::size_t culled_total = 0;
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    const auto input = crumpled(10 + 6 * static_cast<int>(seed), seed % 2 ? 1 : 2,
                                1 + static_cast<int>(seed % 3), seed);
    const ClothMesh mesh = ClothMesh::build(input);
    const Positions x = test::concatenated_positions(input);
    const Bvh bvh(mesh, x);
    const Intersections with = find_intersections(mesh, bvh, x, {.cull = true});
    const Intersections without = find_intersections(mesh, bvh, x, {.cull = false});
    EXPECT_EQ(with.pairs, without.pairs) << "seed " << seed;
    EXPECT_EQ(with.pairs, test::brute_force_pairs(mesh, x)) << "seed " << seed;
    EXPECT_LE(with.candidate_pairs, without.candidate_pairs);
    const auto culled_pairs = as_set(bvh.find_candidates(true).leaf_pairs);
    const auto all_pairs = as_set(bvh.find_candidates(false).leaf_pairs);
    EXPECT_TRUE(std::includes(all_pairs.begin(), all_pairs.end(), culled_pairs.begin(),
                              culled_pairs.end()));
    culled_total += with.culled_nodes.size();
  }
  EXPECT_GT(culled_total, 0u) << "the meshes should give culling something to do";
}

// Two pieces have their own roots; far apart, nothing is a candidate between them.
TEST(Bvh, SeparatePiecesGiveNoCandidatesBetweenThem) {
  const std::vector<PolygonMesh> pieces = {test::grid(5, 5), test::grid(5, 5, 1.0, {0, 0, 3})};
  const ClothMesh mesh = ClothMesh::build(pieces);
  const Bvh bvh(mesh, test::concatenated_positions(pieces));
  ASSERT_EQ(bvh.roots().size(), 2u);
  for (Index root : bvh.roots()) EXPECT_TRUE(bvh.nodes()[root].cullable);
  EXPECT_TRUE(bvh.find_candidates(true).leaf_pairs.empty());
  for (const LeafPair& p : bvh.find_candidates(false).leaf_pairs) {
    EXPECT_EQ(mesh.triangle_piece[mesh.leaves[p[0]][0]], mesh.triangle_piece[mesh.leaves[p[1]][0]]);
  }
}

// Refit keeps the shape and follows the positions: after moving the vertices every node's
// volume contains all vertices of its leaves, and inflation by d contains each of them moved by
// d along every axis of the volume, and widens each slab by d (up to the volumes' rounding to
// floats).
TEST(Bvh, RefitContainsMovedVerticesAndInflatesByTheDistance) {
  const auto start = crumpled(12, 1, 1, 5);
  const auto moved = crumpled(12, 1, 2, 6);  // same topology, other positions
  const ClothMesh mesh = ClothMesh::build(start);
  Bvh bvh(mesh, test::concatenated_positions(start));
  const std::size_t node_count = bvh.nodes().size();
  const Positions x = test::concatenated_positions(moved);
  bvh.refit(x, 0.0);
  EXPECT_EQ(bvh.nodes().size(), node_count);
  const std::vector<BvhNode>& nodes = bvh.nodes();
  std::vector<Kdop18f> tight;
  for (std::size_t n = 0; n < node_count; ++n) tight.push_back(bvh.volume(static_cast<Index>(n)));
  // Every vertex of each leaf, with the leaf's ancestors.
  auto for_each_leaf_vertex = [&](auto&& visit) {
    for (std::size_t n = 0; n < node_count; ++n) {
      if (!nodes[n].is_leaf()) continue;
      for (Index i = static_cast<Index>(n); i != kNoIndex; i = nodes[i].parent) {
        for (Index t : mesh.leaves[nodes[n].leaf]) {
          if (t == kNoIndex) continue;
          for (Index v : mesh.triangles[t]) visit(i, x[v]);
        }
      }
    }
  };
  for_each_leaf_vertex([&](Index i, const Vec3& p) { EXPECT_TRUE(tight[i].contains(p)); });
  const double d = 0.125;
  bvh.refit(x, d);
  for_each_leaf_vertex([&](Index i, const Vec3& p) {
    for (int k = 0; k < Kdop18::kAxes; ++k) {
      EXPECT_TRUE(bvh.volume(i).contains(p + d * Kdop18::axis(k)));
      EXPECT_TRUE(bvh.volume(i).contains(p - d * Kdop18::axis(k)));
    }
  });
  for (std::size_t n = 0; n < node_count; ++n) {
    for (int k = 0; k < Kdop18::kAxes; ++k) {
      // Coordinates of a few units: floats round them by under 1e-6.
      EXPECT_NEAR(bvh.volume(static_cast<Index>(n)).min[k], tight[n].min[k] - d, 1e-5);
      EXPECT_NEAR(bvh.volume(static_cast<Index>(n)).max[k], tight[n].max[k] + d, 1e-5);
    }
  }
  EXPECT_THROW(bvh.refit(x, -1.0), std::invalid_argument);
  Positions fewer = x;
  fewer.pop_back();
  EXPECT_THROW(bvh.refit(fewer), std::invalid_argument);
}

// Same candidates and culled nodes, in the same order, for 1 and 2 threads.
TEST(Bvh, CandidatesIdenticalForOneAndTwoThreads) {
  const auto input = crumpled(50, 2, 3, 9);
  const ClothMesh mesh = ClothMesh::build(input);
  const Positions x = test::concatenated_positions(input);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const Bvh bvh1(mesh, x);
  const Candidates one = bvh1.find_candidates(true);
  omp_set_num_threads(2);
  const Bvh bvh2(mesh, x);
  const Candidates two = bvh2.find_candidates(true);
  omp_set_num_threads(saved);
  EXPECT_EQ(one.leaf_pairs, two.leaf_pairs);
  EXPECT_EQ(one.culled_nodes, two.culled_nodes);
  ASSERT_EQ(bvh1.nodes().size(), bvh2.nodes().size());
  for (std::size_t n = 0; n < bvh1.nodes().size(); ++n) {
    EXPECT_EQ(bvh1.nodes()[n].cullable, bvh2.nodes()[n].cullable);
  }
}

// The leaves under node n.
void collect_leaves(const Bvh& bvh, Index n, std::vector<Index>& out) {
  const BvhNode& node = bvh.nodes()[n];
  if (node.is_leaf()) {
    out.push_back(node.leaf);
    return;
  }
  collect_leaves(bvh, node.left, out);
  collect_leaves(bvh, node.right, out);
}

// The connected parts (through shared edges) of a set of leaves, as a part number per leaf.
std::map<Index, int> parts_of(const ClothMesh& mesh, const std::vector<Index>& leaves) {
  std::map<Index, int> part;
  for (Index l : leaves) part[l] = -1;
  int count = 0;
  for (Index start : leaves) {
    if (part[start] >= 0) continue;
    std::vector<Index> stack = {start};
    part[start] = count;
    while (!stack.empty()) {
      const Index l = stack.back();
      stack.pop_back();
      for (Index t : mesh.leaves[l]) {
        if (t == kNoIndex) continue;
        for (Index e : mesh.triangle_edges[t]) {
          for (Index other : mesh.edges[e].triangles) {
            if (other == kNoIndex) continue;
            const auto it = part.find(mesh.triangle_leaf[other]);
            if (it != part.end() && it->second < 0) {
              it->second = count;
              stack.push_back(it->first);
            }
          }
        }
      }
    }
    ++count;
  }
  return part;
}

// A rolled sheet (three windings, apart by more than a quad) and crumpled sheets: a split by
// position alone cuts them into nodes of several disconnected parts, which are never culled. A
// node of 32 leaves or more whose leaves fall apart must send each part whole to one child; the
// roll, each of whose windings is a smooth strip, must then be culled down to the pairs between
// windings, and culling still loses no pair.
TEST(Bvh, NodesOfSeveralPartsSendEachPartWholeToOneChild) {
  const double pi = 3.14159265358979323846;
  std::vector<std::vector<PolygonMesh>> inputs = {{quad_grid(121, 10, [&](Index i, Index j) {
    const double angle = 6 * pi * i / 120.0, radius = 1 + 0.1 * angle;
    return Vec3(radius * std::cos(angle), radius * std::sin(angle), 0.15 * j);
  })}};
  for (std::uint64_t seed = 1; seed <= 3; ++seed) inputs.push_back(crumpled(40, 1, 3, seed));
  std::size_t split_nodes = 0;
  for (const auto& input : inputs) {
    const ClothMesh mesh = ClothMesh::build(input);
    const Positions x = test::concatenated_positions(input);
    const Bvh bvh(mesh, x);
    for (std::size_t n = 0; n < bvh.nodes().size(); ++n) {
      const BvhNode& node = bvh.nodes()[n];
      if (node.is_leaf()) continue;
      std::vector<Index> leaves, left;
      collect_leaves(bvh, static_cast<Index>(n), leaves);
      if (leaves.size() < 32) continue;
      const std::map<Index, int> part = parts_of(mesh, leaves);
      if (std::all_of(part.begin(), part.end(), [](const auto& p) { return p.second == 0; })) {
        continue;
      }
      ++split_nodes;
      collect_leaves(bvh, node.left, left);
      const std::set<Index> in_left(left.begin(), left.end());
      std::map<int, std::set<bool>> sides;  // per part: the children its leaves went to
      for (const auto& [leaf, p] : part) sides[p].insert(in_left.count(leaf) > 0);
      for (const auto& [p, side] : sides)
        EXPECT_EQ(side.size(), 1u) << "node " << n << " part " << p;
    }
    EXPECT_EQ(find_intersections(mesh, bvh, x, {.cull = true}).pairs,
              test::brute_force_pairs(mesh, x));
  }
  EXPECT_GT(split_nodes, 0u) << "the meshes should have nodes of several parts";
  // The roll: no leaf pair inside one winding but between neighbouring leaves is left to test
  // beyond those the windings' own splits need; far fewer pairs than without culling.
  const ClothMesh roll = ClothMesh::build(inputs[0]);
  const Bvh roll_bvh(roll, test::concatenated_positions(inputs[0]));
  EXPECT_LT(4 * roll_bvh.find_candidates(true).leaf_pairs.size(),
            roll_bvh.find_candidates(false).leaf_pairs.size());
}

}  // namespace
}  // namespace untangle
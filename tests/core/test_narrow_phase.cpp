// Narrow phase: the intersecting triangle pairs, hits and segments of find_intersections,
// checked against an independent brute-force triangle-triangle test and hand-built cases.
#include "untangle/narrow_phase.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <map>
#include <random>
#include <set>

#include "support/brute_force.hpp"
#include "support/crumpled_mesh.hpp"
#include "support/small_meshes.hpp"

namespace untangle {
namespace {

using test::CrumpleOptions;
using test::triangles;

struct Case {
  int nx, ny, pieces, folds;
  std::uint64_t seed;
};

// Triangle counts from 98 to 20,000, one and two pieces.
const Case kCases[] = {{7, 7, 1, 1, 1},    {7, 7, 1, 2, 2},    {10, 5, 2, 1, 3},
                       {15, 15, 1, 2, 4},  {15, 15, 2, 1, 5},  {20, 20, 1, 3, 6},
                       {30, 30, 1, 2, 7},  {25, 25, 2, 2, 8},  {50, 50, 1, 2, 9},
                       {40, 40, 2, 3, 10}, {70, 70, 1, 3, 11}, {100, 100, 1, 2, 12},
                       {71, 70, 2, 2, 13}};

struct Built {
  ClothMesh mesh;
  Positions x;
};

Built build_case(const Case& c) {
  CrumpleOptions o;
  o.nx = c.nx;
  o.ny = c.ny;
  o.folds = c.folds;
  o.seed = c.seed;
  const auto pieces = test::crumpled_pieces(o, c.pieces);
  return {ClothMesh::build(pieces), test::concatenated_positions(pieces)};
}

// The property that everything downstream relies on: the detector finds exactly the pairs of
// triangles (sharing no vertex) that cut through each other, no more, no fewer.
TEST(NarrowPhase, PairsEqualBruteForceOnCrumpledMeshes) {
  std::size_t total_pairs = 0;
  for (const Case& c : kCases) {
    const Built b = build_case(c);
    const Bvh bvh(b.mesh, b.x);
    const Intersections found = find_intersections(b.mesh, bvh, b.x);
    const auto expected = test::brute_force_pairs(b.mesh, b.x);
    SCOPED_TRACE(::testing::Message() << b.mesh.triangle_count() << " triangles, " << c.pieces
                                      << " pieces, seed " << c.seed);
    EXPECT_EQ(found.dropped_hits, 0u);
    EXPECT_EQ(found.pairs, expected);
    EXPECT_FALSE(expected.empty()) << "the crumpled mesh should cut through itself";
    total_pairs += expected.size();
  }
  EXPECT_GT(total_pairs, 1000u);
}

// Two wavy sheets, not folded: each is culled, so the candidate leaf pairs (mostly between the
// sheets) are fewer than two per leaf and only their leaves' triangles are prepared (the path of
// the untangler's checks on almost clean states). Pairs still equal brute force, with buffers
// that held a heavier case's triangles before.
TEST(NarrowPhase, PairsEqualBruteForceWhenFewLeavesAreCandidates) {
  CrumpleOptions o;
  o.nx = o.ny = 40;
  o.folds = 0;
  std::size_t total_pairs = 0;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    o.seed = seed;
    const auto pieces = test::crumpled_pieces(o, 2);
    const ClothMesh mesh = ClothMesh::build(pieces);
    const Positions x = test::concatenated_positions(pieces);
    const Bvh bvh(mesh, x);
    ASSERT_LT(bvh.find_candidates(true).leaf_pairs.size(), 2 * mesh.leaves.size());
    NarrowPhaseBuffers buffers;
    const Built heavy = build_case({40, 40, 1, 3, 41});
    const Bvh heavy_bvh(heavy.mesh, heavy.x);
    find_intersections(heavy.mesh, heavy_bvh, heavy.x, {}, &buffers);
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    const auto expected = test::brute_force_pairs(mesh, x);
    EXPECT_EQ(find_intersections(mesh, bvh, x, {}, &buffers).pairs, expected);
    total_pairs += expected.size();
  }
  EXPECT_GT(total_pairs, 20u) << "the sheets should cut through each other";
}

// The same on meshes whose BVH leaves are not all quads: every third quad given as two
// triangles (paired into leaves across other edges, or left alone; the first quad only half
// there), and one triangle of zero
// area (its corner moved onto the middle of its opposite side), which is never tested.
TEST(NarrowPhase, PairsEqualBruteForceOnMixedTriangleAndQuadMeshes) {
  std::size_t total_pairs = 0, lone_leaves = 0;
  for (const Case& c : {kCases[5], kCases[8], kCases[9]}) {
    CrumpleOptions o;
    o.nx = c.nx;
    o.ny = c.ny;
    o.folds = c.folds;
    o.seed = c.seed;
    auto pieces = test::crumpled_pieces(o, c.pieces);
    for (PolygonMesh& piece : pieces) {
      PolygonMesh mixed;
      mixed.positions = piece.positions;
      for (std::size_t f = 0; f < piece.face_sizes.size(); ++f) {
        const Index* q = &piece.face_indices[4 * f];
        if (f == 0) {  // half of the first quad only: an odd triangle count leaves one alone
          mixed.face_sizes.push_back(3);
          mixed.face_indices.insert(mixed.face_indices.end(), {q[0], q[1], q[3]});
        } else if (f % 3 == 0) {
          mixed.face_sizes.insert(mixed.face_sizes.end(), {3, 3});
          mixed.face_indices.insert(mixed.face_indices.end(), {q[0], q[1], q[3], q[1], q[2], q[3]});
        } else {
          mixed.face_sizes.push_back(4);
          mixed.face_indices.insert(mixed.face_indices.end(), q, q + 4);
        }
      }
      piece = mixed;
    }
    // Quad (a, b, c, d) is fanned into (a, b, c) and (a, c, d): b onto the middle of a-c.
    const Index* q = &pieces[0].face_indices[3];  // the second face, after one triangle
    Positions& p = pieces[0].positions;
    p[q[1]] = 0.5 * (p[q[0]] + p[q[2]]);
    const ClothMesh mesh = ClothMesh::build(pieces);
    const Positions x = test::concatenated_positions(pieces);
    ASSERT_EQ(mesh.report.degenerate_triangles, 1u);
    for (const Leaf& leaf : mesh.leaves) lone_leaves += leaf[1] == kNoIndex ? 1 : 0;
    const Bvh bvh(mesh, x);
    const Intersections found = find_intersections(mesh, bvh, x);
    const auto expected = test::brute_force_pairs(mesh, x);
    SCOPED_TRACE(::testing::Message() << mesh.triangle_count() << " triangles, seed " << c.seed);
    EXPECT_EQ(found.pairs, expected);
    EXPECT_FALSE(expected.empty());
    total_pairs += expected.size();
  }
  EXPECT_GT(total_pairs, 100u);
  EXPECT_GT(lone_leaves, 0u) << "some leaves should hold a single triangle";
}

// A dense tangle, as a collapsed tube is: two noisy sheets laid on each other, so that over a
// fifth of the candidate pairs intersect (the case the interval test's edge selection speeds
// up). Pairs equal brute force, and every hit and dropped hit equals an edge-by-edge test of
// every edge against every triangle whose box it reaches, bit for bit.
TEST(NarrowPhase, DenseTangleEqualsBruteForceAndEveryEdgeTest) {
  const int n = 24;
  const double h = 0.1;
  std::vector<PolygonMesh> pieces = {test::grid(n, n, h),
                                     test::grid(n, n, h, {0.5 * h, 0.4 * h, 0})};
  std::mt19937_64 rng(7);
  for (PolygonMesh& piece : pieces) {
    for (Vec3& p : piece.positions) p.z() = test::detail::uniform(rng, -0.4 * h, 0.4 * h);
  }
  const ClothMesh mesh = ClothMesh::build(pieces);
  const Positions x = test::concatenated_positions(pieces);
  const Bvh bvh(mesh, x);
  const Intersections found = find_intersections(mesh, bvh, x);
  EXPECT_EQ(found.pairs, test::brute_force_pairs(mesh, x));
  EXPECT_GT(5 * found.pairs.size(), found.candidate_pairs) << "the tangle should be dense";

  std::map<std::array<Index, 2>, Hit> hits;  // by (edge, triangle)
  std::set<std::array<Index, 2>> dropped;
  for (Index t = 0; t < mesh.triangle_count(); ++t) {
    const auto& tc = mesh.triangles[t];
    const Vec3 low = x[tc[0]].cwiseMin(x[tc[1]]).cwiseMin(x[tc[2]]).array() - h;
    const Vec3 high = x[tc[0]].cwiseMax(x[tc[1]]).cwiseMax(x[tc[2]]).array() + h;
    for (Index e = 0; e < mesh.edges.size(); ++e) {
      const auto& ev = mesh.edges[e].vertices;
      if (ev[0] == tc[0] || ev[0] == tc[1] || ev[0] == tc[2] || ev[1] == tc[0] || ev[1] == tc[1] ||
          ev[1] == tc[2]) {
        continue;
      }
      // Only edges of a triangle that shares no vertex with t are tested by the detector.
      bool tested = false;
      for (Index k = 0; k < std::min<Index>(mesh.edges[e].triangle_count, 2); ++k) {
        const auto& oc = mesh.triangles[mesh.edges[e].triangles[k]];
        bool shares = false;
        for (Index v : oc) shares = shares || v == tc[0] || v == tc[1] || v == tc[2];
        tested = tested || !shares;
      }
      if (!tested || (x[ev[0]].cwiseMax(x[ev[1]]).array() < low.array()).any() ||
          (x[ev[0]].cwiseMin(x[ev[1]]).array() > high.array()).any()) {
        continue;
      }
      Hit hit;
      hit.edge = e;
      hit.triangle = t;
      const EdgeTriangleResult r =
          intersect_edge_triangle(x[ev[0]], x[ev[1]], x[tc[0]], x[tc[1]], x[tc[2]], hit);
      if (r == EdgeTriangleResult::kHit) hits[{e, t}] = hit;
      if (r == EdgeTriangleResult::kDropped) dropped.insert({e, t});
    }
  }
  EXPECT_EQ(found.dropped_hits, dropped.size());
  std::set<Index> dropped_edges;
  for (const auto& key : dropped) dropped_edges.insert(key[0]);
  EXPECT_EQ(found.dropped_edges, std::vector<Index>(dropped_edges.begin(), dropped_edges.end()));
  ASSERT_EQ(found.hits.size(), hits.size());
  auto expected = hits.begin();
  for (const Hit& hit : found.hits) {
    const Hit& e = (expected++)->second;
    EXPECT_EQ(hit.edge, e.edge);
    EXPECT_EQ(hit.triangle, e.triangle);
    EXPECT_EQ(hit.t, e.t);
    EXPECT_EQ(hit.point, e.point);
    EXPECT_EQ(hit.barycentric, e.barycentric);
  }
}

// Hits are unique and sorted by (edge, triangle); each lies on its edge at parameter t and at
// its barycentrics on the triangle; each segment's hits belong to its own two triangles.
TEST(NarrowPhase, HitsAreConsistentWithTheirEdgeTriangleAndSegment) {
  const Built b = build_case({30, 30, 2, 2, 21});
  const Bvh bvh(b.mesh, b.x);
  const Intersections found = find_intersections(b.mesh, bvh, b.x);
  ASSERT_FALSE(found.hits.empty());
  for (std::size_t i = 1; i < found.hits.size(); ++i) {
    const Hit& p = found.hits[i - 1];
    const Hit& q = found.hits[i];
    EXPECT_TRUE(p.edge < q.edge || (p.edge == q.edge && p.triangle < q.triangle));
  }
  for (const Hit& h : found.hits) {
    const auto& ev = b.mesh.edges[h.edge].vertices;
    const auto& tc = b.mesh.triangles[h.triangle];
    const Vec3 on_edge = (1 - h.t) * b.x[ev[0]] + h.t * b.x[ev[1]];
    const Vec3 on_triangle = h.barycentric[0] * b.x[tc[0]] + h.barycentric[1] * b.x[tc[1]] +
                             h.barycentric[2] * b.x[tc[2]];
    EXPECT_LT((on_edge - h.point).norm(), 1e-12);
    EXPECT_LT((on_triangle - h.point).norm(), 1e-9);
    EXPECT_GT(h.t, 0);
    EXPECT_LT(h.t, 1);
    EXPECT_GT(h.barycentric.minCoeff(), 0);
  }
  auto edge_of = [&](Index e, Index t) {
    const auto& te = b.mesh.triangle_edges[t];
    return te[0] == e || te[1] == e || te[2] == e;
  };
  std::set<std::array<Index, 2>> pair_set(found.pairs.begin(), found.pairs.end());
  for (const Segment& s : found.segments) {
    EXPECT_LT(s.triangles[0], s.triangles[1]);
    EXPECT_TRUE(pair_set.count(s.triangles));
    for (Index h : s.hits) {
      const Hit& hit = found.hits[h];
      const bool a_edge = hit.triangle == s.triangles[1] && edge_of(hit.edge, s.triangles[0]);
      const bool b_edge = hit.triangle == s.triangles[0] && edge_of(hit.edge, s.triangles[1]);
      EXPECT_TRUE(a_edge || b_edge);
    }
  }
  // Generic position: every intersecting pair has its two hits, so it is one segment.
  EXPECT_EQ(found.segments.size(), found.pairs.size());
}

void expect_identical(const Intersections& one, const Intersections& two) {
  EXPECT_EQ(one.pairs, two.pairs);
  EXPECT_EQ(one.candidate_pairs, two.candidate_pairs);
  EXPECT_EQ(one.culled_nodes, two.culled_nodes);
  EXPECT_EQ(one.dropped_hits, two.dropped_hits);
  ASSERT_EQ(one.hits.size(), two.hits.size());
  for (std::size_t i = 0; i < one.hits.size(); ++i) {
    EXPECT_EQ(one.hits[i].edge, two.hits[i].edge);
    EXPECT_EQ(one.hits[i].triangle, two.hits[i].triangle);
    EXPECT_EQ(one.hits[i].point, two.hits[i].point);
    EXPECT_EQ(one.hits[i].t, two.hits[i].t);
  }
  ASSERT_EQ(one.segments.size(), two.segments.size());
  for (std::size_t i = 0; i < one.segments.size(); ++i) {
    EXPECT_EQ(one.segments[i].triangles, two.segments[i].triangles);
    EXPECT_EQ(one.segments[i].hits, two.segments[i].hits);
  }
}

// Output must not depend on the thread count: same pairs, hits (bit for bit), segments. Three
// threads split the sorts' bucket ranges unevenly.
TEST(NarrowPhase, IdenticalForOneTwoAndThreeThreads) {
  const Built b = build_case({60, 60, 2, 3, 31});
  const Bvh bvh(b.mesh, b.x);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const Intersections one = find_intersections(b.mesh, bvh, b.x);
  ASSERT_FALSE(one.hits.empty());
  for (int threads : {2, 3}) {
    omp_set_num_threads(threads);
    expect_identical(one, find_intersections(b.mesh, bvh, b.x));
  }
  omp_set_num_threads(saved);
}

// Buffers kept from a frame with more intersections give the same result as fresh ones (the
// light case is the same grid, crumpled less).
TEST(NarrowPhase, ReusedBuffersGiveTheResultOfFreshOnes) {
  const Built heavy = build_case({40, 40, 1, 3, 41});
  const Built light = build_case({40, 40, 1, 1, 42});
  Bvh bvh(heavy.mesh, heavy.x);
  NarrowPhaseBuffers buffers;
  const Intersections first = find_intersections(heavy.mesh, bvh, heavy.x, {}, &buffers);
  bvh.refit(light.x);
  const Intersections fresh = find_intersections(heavy.mesh, bvh, light.x);
  ASSERT_LT(fresh.pairs.size(), first.pairs.size());
  expect_identical(fresh, find_intersections(heavy.mesh, bvh, light.x, {}, &buffers));
  // Written over the heavier frame's result, nothing of it is left.
  Intersections over = first;
  find_intersections(heavy.mesh, bvh, light.x, {}, &buffers, over);
  expect_identical(fresh, over);
}

// An edge through the inside of a triangle: the hit's point, t and barycentrics by hand.
TEST(NarrowPhase, SingleCrossingMatchesHandComputation) {
  const std::vector<PolygonMesh> pieces = {
      triangles({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, {{0, 1, 2}}),
      // A vertical triangle; its edge (0.2, 0.3, -1) -> (0.2, 0.3, 3) crosses z = 0 at t = 1/4.
      triangles({{0.2, 0.3, -1}, {0.2, 0.3, 3}, {-2, 0.3, 1}}, {{0, 1, 2}})};
  const ClothMesh mesh = ClothMesh::build(pieces);
  const Positions x = test::concatenated_positions(pieces);
  const Bvh bvh(mesh, x);
  const Intersections found = find_intersections(mesh, bvh, x);
  ASSERT_EQ(found.pairs.size(), 1u);
  EXPECT_EQ(found.pairs[0], (std::array<Index, 2>{0, 1}));
  // The second hit: the horizontal triangle's edge from (0,0,0) to (0,1,0) crosses the plane
  // y = 0.3 at (0, 0.3, 0), inside the vertical triangle.
  ASSERT_EQ(found.hits.size(), 2u);
  ASSERT_EQ(found.segments.size(), 1u);
  bool saw_vertical_edge = false;
  for (const Hit& h : found.hits) {
    if (h.triangle == 0) {
      saw_vertical_edge = true;
      EXPECT_NEAR(h.t, 0.25, 1e-15);
      EXPECT_TRUE(h.point.isApprox(Vec3(0.2, 0.3, 0), 1e-14));
      EXPECT_TRUE(h.barycentric.isApprox(Vec3(0.5, 0.2, 0.3), 1e-14));
    } else {
      EXPECT_TRUE(h.point.isApprox(Vec3(0, 0.3, 0), 1e-14));
    }
  }
  EXPECT_TRUE(saw_vertical_edge);
}

// Touching exactly at a point of both triangles' edges: both hits are degenerate, so there is
// no hit, no pair and two dropped hits.
TEST(NarrowPhase, HitsThroughAnEdgeAreDroppedAndCounted) {
  const std::vector<PolygonMesh> pieces = {
      triangles({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, {{0, 1, 2}}),
      triangles({{0.5, 0, -1}, {0.5, 0, 1}, {0.5, -1, 0}}, {{0, 1, 2}})};
  const ClothMesh mesh = ClothMesh::build(pieces);
  const Positions x = test::concatenated_positions(pieces);
  const Bvh bvh(mesh, x);
  const Intersections found = find_intersections(mesh, bvh, x);
  EXPECT_TRUE(found.hits.empty());
  EXPECT_TRUE(found.pairs.empty());
  EXPECT_EQ(found.dropped_hits, 2u);
  // Edge (0, 1) of the first triangle through the second's edge (0, 1), and that edge through
  // the first's: the mesh's edges 0 -> 1 and 3 -> 4.
  std::vector<Index> expected;
  for (Index e = 0; e < mesh.edges.size(); ++e) {
    const auto& v = mesh.edges[e].vertices;
    if ((v[0] == 0 && v[1] == 1) || (v[0] == 3 && v[1] == 4)) expected.push_back(e);
  }
  EXPECT_EQ(found.dropped_edges, expected);
  EXPECT_EQ(found.candidate_pairs, 1u);
}

// Triangles sharing a vertex are never a pair, even when they cross (a fold through a vertex).
TEST(NarrowPhase, PairsSharingAVertexAreSkipped) {
  // Triangle 1 shares vertex 0 with triangle 0 and passes through it.
  const std::vector<PolygonMesh> pieces = {triangles(
      {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0.5, 0.2, -1}, {0.3, 0.4, 1}}, {{0, 1, 2}, {0, 3, 4}})};
  const ClothMesh mesh = ClothMesh::build(pieces);
  const Positions x = pieces[0].positions;
  const Bvh bvh(mesh, x);
  const Intersections found = find_intersections(mesh, bvh, x);
  EXPECT_TRUE(found.pairs.empty());
  EXPECT_EQ(found.candidate_pairs, 0u);
}

// Bad input is refused with a clear error, not a crash.
TEST(NarrowPhase, WrongPositionCountThrows) {
  const std::vector<PolygonMesh> pieces = {test::grid(2, 2)};
  const ClothMesh mesh = ClothMesh::build(pieces);
  const Bvh bvh(mesh, pieces[0].positions);
  Positions fewer = pieces[0].positions;
  fewer.pop_back();
  EXPECT_THROW(find_intersections(mesh, bvh, fewer), std::invalid_argument);
}

}  // namespace
}  // namespace untangle

// Proximity: ProximitySearch against an all-pairs search with the same neighbour rule, on
// parallel sheets and on crumpled ones (the closest-point helpers are tested in
// test_point_triangle_distance.cpp and test_edge_edge_distance.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "support/crumpled_mesh.hpp"
#include "untangle/proximity.hpp"

namespace untangle {
namespace {

Vec3 random_point(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  return Vec3(u(rng), u(rng), u(rng));
}

// The rule of ProximitySearch, written out plainly: topological neighbours (sharing a
// polygon with a vertex of the triangle's leaf, or of the other edge; with ring_pairs only being
// one of them) are not pairs.
bool near_in_mesh(const ClothMesh& mesh, Index p, std::span<const Index> vertices,
                  bool ring_pairs) {
  for (Index v : vertices) {
    if (v == p) return true;
    if (ring_pairs) continue;
    for (Index r : mesh.vertex_ring[v]) {
      if (r == p) return true;
    }
  }
  return false;
}

// Whether one BVH leaf holds all four ends of two edges (two sides of one quad).
bool in_one_leaf(const ClothMesh& mesh, const std::array<Index, 2>& a,
                 const std::array<Index, 2>& b) {
  for (Index t : mesh.vertex_triangles[a[0]]) {
    std::vector<Index> leaf_vertices;
    for (Index lt : mesh.leaves[mesh.triangle_leaf[t]]) {
      if (lt == kNoIndex) continue;
      for (Index v : mesh.triangles[lt]) leaf_vertices.push_back(v);
    }
    const auto held = [&](Index v) {
      return std::find(leaf_vertices.begin(), leaf_vertices.end(), v) != leaf_vertices.end();
    };
    if (held(a[1]) && held(b[0]) && held(b[1])) return true;
  }
  return false;
}

ProximityPairs all_pairs(const ClothMesh& mesh, const Positions& x, double h,
                         bool ring_pairs = false) {
  ProximityPairs pairs;
  for (Index t = 0; t < mesh.triangle_count(); ++t) {
    if (!mesh.triangle_detectable[t]) continue;
    std::vector<Index> leaf_vertices;
    for (Index lt : mesh.leaves[mesh.triangle_leaf[t]]) {
      if (lt == kNoIndex) continue;
      for (Index v : mesh.triangles[lt]) leaf_vertices.push_back(v);
    }
    const auto& c = mesh.triangles[t];
    for (Index p = 0; p < mesh.vertex_count(); ++p) {
      if (near_in_mesh(mesh, p, leaf_vertices, ring_pairs)) continue;
      Vec3 bary;
      if ((x[p] - closest_point_on_triangle(x[p], x[c[0]], x[c[1]], x[c[2]], bary)).norm() < h) {
        pairs.point_triangle.push_back({p, t});
      }
    }
  }
  for (Index e = 0; e < mesh.edges.size(); ++e) {
    for (Index f = e + 1; f < mesh.edges.size(); ++f) {
      const auto& a = mesh.edges[e].vertices;
      const auto& b = mesh.edges[f].vertices;
      if (near_in_mesh(mesh, a[0], b, ring_pairs) || near_in_mesh(mesh, a[1], b, ring_pairs) ||
          in_one_leaf(mesh, a, b)) {
        continue;
      }
      double s, t;
      closest_points_of_segments(x[a[0]], x[a[1]], x[b[0]], x[b[1]], s, t);
      if (s <= 0 || s >= 1 || t <= 0 || t >= 1) continue;
      if (((x[a[0]] + s * (x[a[1]] - x[a[0]])) - (x[b[0]] + t * (x[b[1]] - x[b[0]]))).norm() < h) {
        pairs.edge_edge.push_back({{e, f}});
      }
    }
  }
  std::sort(pairs.point_triangle.begin(), pairs.point_triangle.end());
  return pairs;
}

void expect_same_pairs(const ClothMesh& mesh, const Positions& x, double h,
                       bool ring_pairs = false) {
  const Bvh bvh(mesh, x);
  ProximitySearch search(bvh);
  const ProximityPairs found = search.find(x, h, ring_pairs);
  const ProximityPairs expected = all_pairs(mesh, x, h, ring_pairs);
  EXPECT_EQ(found.point_triangle, expected.point_triangle);
  EXPECT_EQ(found.edge_edge, expected.edge_edge);
}

TEST(Proximity, ParallelSheetsCloserThanTheThicknessPairEveryPointWithTheOtherSheet) {
  const double h = 0.02;
  std::vector<PolygonMesh> pieces{test::grid(6, 6, 0.1),
                                  test::grid(6, 6, 0.1, Vec3(0.033, 0.021, 0.015))};
  const ClothMesh mesh = ClothMesh::build(pieces);
  const Positions x = mesh.rest_positions;
  expect_same_pairs(mesh, x, h);
  const Bvh bvh(mesh, x);
  ProximitySearch search(bvh);
  const ProximityPairs found = search.find(x, h);
  EXPECT_GT(found.point_triangle.size(), 49u);  // every upper vertex over the lower sheet
  // A sheet alone, flat: nothing is close to anything that is not a neighbour.
  const ClothMesh single = ClothMesh::build(std::vector<PolygonMesh>{test::grid(8, 8, 0.1)});
  const Bvh single_bvh(single, single.rest_positions);
  ProximitySearch single_search(single_bvh);
  EXPECT_EQ(single_search.find(single.rest_positions, h).size(), 0u);
}

TEST(Proximity, CrumpledSheetsMatchTheAllPairsSearch) {
  for (std::uint64_t seed : {1, 2, 3}) {
    test::CrumpleOptions options;
    options.nx = options.ny = 12;
    options.seed = seed;
    const std::vector<PolygonMesh> pieces = test::crumpled_pieces(options, 2);
    const ClothMesh mesh = ClothMesh::build(pieces);
    SCOPED_TRACE(seed);
    expect_same_pairs(mesh, mesh.rest_positions, 0.05);
    expect_same_pairs(mesh, mesh.rest_positions, 0.05, true);
  }
}

// A strip of quads folded flat over one of its edges: the quad on each side of the fold is
// 0.2 spacings from the other. They share a polygon's vertices (the fold edge) but no vertex of
// the far triangles, so only ring_pairs pairs them; one search object answers both rules in turn.
TEST(Proximity, RingPairsHoldAFoldOneQuadWide) {
  PolygonMesh strip = test::grid(2, 1, 0.1);
  // Column 2 (vertices 2 and 5) folded back over column 1 to lie 0.02 above column 0.
  strip.positions[2] = Vec3(0.0, 0.0, 0.02);
  strip.positions[5] = Vec3(0.0, 0.1, 0.02);
  const ClothMesh mesh = ClothMesh::build(std::vector{strip});
  const Positions x = mesh.rest_positions;
  const double h = 0.05;
  const Bvh bvh(mesh, x);
  ProximitySearch search(bvh);
  EXPECT_EQ(search.find(x, h).size(), 0u);
  const ProximityPairs ring = search.find(x, h, true);
  EXPECT_GT(ring.point_triangle.size(), 0u);
  for (const PointTrianglePair& pair : ring.point_triangle) {
    EXPECT_TRUE(pair.point == 0 || pair.point == 3 || pair.point == 2 || pair.point == 5);
  }
  EXPECT_EQ(ring.point_triangle, all_pairs(mesh, x, h, true).point_triangle);
  EXPECT_EQ(search.find(x, h).size(), 0u);
}

// One search object, kept as the solver keeps it: after moves smaller than its margin (1.5
// thicknesses) it tests the leaf pairs of its last walk of the trees again, after a larger move
// it walks again. Every result must still be the all-pairs result at the new positions, also
// when the neighbour rule changes between searches of one walk (the search keeps each leaf
// pair's tests under the rule it last used).
TEST(Proximity, RepeatedSearchesOnMovingSheetsMatchTheAllPairsSearch) {
  test::CrumpleOptions options;
  options.nx = options.ny = 12;
  options.seed = 4;
  const std::vector<PolygonMesh> pieces = test::crumpled_pieces(options, 2);
  const ClothMesh mesh = ClothMesh::build(pieces);
  const double h = 0.05;
  const Bvh bvh(mesh, mesh.rest_positions);
  ProximitySearch search(bvh);
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> fraction(0, 1);
  Positions x = mesh.rest_positions;
  bool ring_pairs = false;
  for (double step : {0.0, 0.15 * h, 0.15 * h, 0.15 * h, 8 * h, 0.2 * h, 0.0, 0.0}) {
    for (Vec3& p : x) p += step * fraction(rng) * random_point(rng).normalized();
    SCOPED_TRACE(testing::Message() << step << (ring_pairs ? " ring pairs" : ""));
    const ProximityPairs found = search.find(x, h, ring_pairs);
    const ProximityPairs expected = all_pairs(mesh, x, h, ring_pairs);
    ring_pairs = !ring_pairs;
    EXPECT_EQ(found.point_triangle, expected.point_triangle);
    EXPECT_EQ(found.edge_edge, expected.edge_edge);
  }
  // Another thickness is a new search.
  EXPECT_EQ(search.find(x, 2 * h).point_triangle, all_pairs(mesh, x, 2 * h).point_triangle);
}

// Between walks, the leaves whose particles moved beyond the margin are looked up on the trees
// instead of walking again. Here a few far-apart vertices of one sheet jump right onto vertices of
// the other sheet (new close pairs that the last walk could not have listed), while the rest of
// the cloth stays put.
TEST(Proximity, AFewVerticesMovedBeyondTheMarginFindTheirNewPairs) {
  test::CrumpleOptions options;
  options.nx = options.ny = 16;
  options.seed = 5;
  const std::vector<PolygonMesh> pieces = test::crumpled_pieces(options, 2);
  const ClothMesh mesh = ClothMesh::build(pieces);
  const double h = 0.05;
  const Bvh bvh(mesh, mesh.rest_positions);
  ProximitySearch search(bvh);
  Positions x = mesh.rest_positions;
  EXPECT_EQ(search.find(x, h).point_triangle, all_pairs(mesh, x, h).point_triangle);
  const Index first_piece_size = static_cast<Index>(pieces[0].positions.size());
  std::size_t moved = 0;
  for (Index v = 0; v < first_piece_size; v += 37) {
    const Index target =
        first_piece_size + (v * 7) % static_cast<Index>(pieces[1].positions.size());
    if ((x[target] - x[v]).norm() < 4 * h) continue;  // must move beyond the margin (1.5 h)
    x[v] = x[target] + Vec3(0.2 * h, -0.1 * h, 0.3 * h);
    ++moved;
  }
  ASSERT_GT(moved, 3u);
  for (const bool ring_pairs : {false, true}) {
    SCOPED_TRACE(ring_pairs);
    const ProximityPairs found = search.find(x, h, ring_pairs);
    const ProximityPairs expected = all_pairs(mesh, x, h, ring_pairs);
    EXPECT_EQ(found.point_triangle, expected.point_triangle);
    EXPECT_EQ(found.edge_edge, expected.edge_edge);
  }
}

// Three quads in a row, listed left, right, middle: the middle quad's left side is owned by the
// left quad's leaf and its right side by the right one's (each edge belongs to the first leaf
// that has it). The middle quad is bent so those two opposite sides pass 0.01 apart with their
// closest points inside both; they are two sides of one quad all the same, which neither rule
// pairs.
TEST(Proximity, OppositeSidesOfAQuadOwnedByTwoOtherLeavesAreNotPaired) {
  PolygonMesh strip;
  strip.positions = {Vec3(0, -1, 0),    Vec3(0, 1, 0),    Vec3(-1, 0, 0.01), Vec3(1, 0, 0.01),
                     Vec3(0.5, -1, -1), Vec3(0.5, 1, -1), Vec3(-1, 0, 1.5),  Vec3(1, 0, 1.5)};
  strip.face_sizes = {4, 4, 4};
  strip.face_indices = {4, 5, 1, 0,   // left quad, side 0-1
                        2, 3, 7, 6,   // right quad, side 2-3
                        0, 1, 3, 2};  // middle quad: sides 0-1 and 3-2 opposite
  const ClothMesh mesh = ClothMesh::build(std::vector{strip});
  const Positions& x = mesh.rest_positions;
  const double h = 0.05;
  double s, t;
  closest_points_of_segments(x[0], x[1], x[2], x[3], s, t);
  ASSERT_LT(((x[0] + s * (x[1] - x[0])) - (x[2] + t * (x[3] - x[2]))).norm(), h);
  ASSERT_TRUE(s > 0 && s < 1 && t > 0 && t < 1);  // a pair but for the rule
  for (const bool ring_pairs : {false, true}) {
    SCOPED_TRACE(ring_pairs);
    expect_same_pairs(mesh, x, h, ring_pairs);
  }
}

// A new rest shape changes which triangles are detectable (zero area in the rest shape: not);
// the search's triangles follow once told. Built while the lower sheet's rest shape is crushed
// to a line, it must find the pairs of the flat rest shape after the update.
TEST(Proximity, DetectableTrianglesFollowANewRestShape) {
  std::vector<PolygonMesh> pieces{test::grid(4, 4, 0.1),
                                  test::grid(4, 4, 0.1, Vec3(0.033, 0.021, 0.015))};
  ClothMesh mesh = ClothMesh::build(pieces);
  const Positions flat = mesh.rest_positions;
  Positions crushed = flat;
  for (std::size_t v = 0; v < pieces[0].positions.size(); ++v) crushed[v].y() = 0;
  mesh.set_rest_positions(crushed);
  ASSERT_EQ(std::count(mesh.triangle_detectable.begin(), mesh.triangle_detectable.end(), 0), 32);
  const Bvh bvh(mesh, flat);
  ProximitySearch search(bvh);
  const double h = 0.02;
  EXPECT_EQ(search.find(flat, h).point_triangle, all_pairs(mesh, flat, h).point_triangle);
  mesh.set_rest_positions(flat);
  search.update_detectable_triangles();
  const ProximityPairs expected = all_pairs(mesh, flat, h);
  ASSERT_GT(expected.point_triangle.size(), 0u);
  EXPECT_EQ(search.find(flat, h).point_triangle, expected.point_triangle);
}

}  // namespace
}  // namespace untangle

namespace untangle {
namespace {

// A sheet of 4 x 4 quads at z = 0 and one more quad whose corners are moved by hand: the swept
// search must find what passes through the sheet on the way, and nothing that only passes by.
struct SweptCase {
  ClothMesh mesh = ClothMesh::build(std::vector<PolygonMesh>{
      test::grid(4, 4, 0.1), test::grid(1, 1, 0.05, Vec3(0.12, 0.13, 0.2))});
  Index quad_begin = 25;

  // The quad's corners moved by `move` from their rest positions; the sheet stays.
  Positions moved(const Vec3& move) const {
    Positions x = mesh.rest_positions;
    for (Index v = quad_begin; v < x.size(); ++v) x[v] += move;
    return x;
  }
};

TEST(SweptProximity, AQuadThatPassesThroughTheSheetWithinOneStepIsPaired) {
  const SweptCase c;
  const double h = 0.01;
  const Positions from = c.mesh.rest_positions;    // 0.2 above the sheet
  const Positions to = c.moved(Vec3(0, 0, -0.4));  // 0.2 below
  const Bvh bvh(c.mesh, from);
  ProximitySearch search(bvh);
  // Farther than the thickness at both ends: the plain search sees nothing.
  EXPECT_EQ(search.find(to, h).size(), 0u);
  const ProximityPairs& swept = search.find(to, h, false, &from);
  // Every corner of the quad passes through the sheet's interior.
  std::set<Index> points;
  for (const PointTrianglePair& pair : swept.point_triangle) {
    if (pair.point >= c.quad_begin) points.insert(pair.point);
  }
  EXPECT_EQ(points.size(), 4u);
}

TEST(SweptProximity, AQuadThatPassesBesideTheSheetIsNotPaired) {
  const SweptCase c;
  const double h = 0.01;
  // Sideways past the sheet's border, far from it, then down: it never crosses the sheet.
  Positions from = c.moved(Vec3(0.6, 0, 0));
  const Positions to = c.moved(Vec3(0.6, 0, -0.4));
  const Bvh bvh(c.mesh, from);
  ProximitySearch search(bvh);
  EXPECT_EQ(search.find(to, h, false, &from).size(), 0u);
  // Moving within its own plane above the sheet: no crossing either.
  from = c.mesh.rest_positions;
  EXPECT_EQ(search.find(c.moved(Vec3(0.05, 0.05, 0)), h, false, &from).size(), 0u);
}

TEST(SweptProximity, TheSweptSearchKeepsEveryPairThePlainSearchFinds) {
  for (std::uint64_t seed : {4, 5}) {
    test::CrumpleOptions options;
    options.nx = options.ny = 10;
    options.seed = seed;
    const ClothMesh mesh = ClothMesh::build(test::crumpled_pieces(options, 2));
    std::mt19937_64 rng(seed);
    Positions from = mesh.rest_positions;
    for (Vec3& p : from) p += 0.05 * random_point(rng);
    const Bvh bvh(mesh, mesh.rest_positions);
    ProximitySearch plain(bvh), swept(bvh);
    const ProximityPairs expected = all_pairs(mesh, mesh.rest_positions, 0.05);
    const ProximityPairs& found = swept.find(mesh.rest_positions, 0.05, false, &from);
    SCOPED_TRACE(seed);
    EXPECT_TRUE(std::includes(found.point_triangle.begin(), found.point_triangle.end(),
                              expected.point_triangle.begin(), expected.point_triangle.end()));
    std::vector<EdgeEdgePair> expected_edges = expected.edge_edge;
    std::sort(expected_edges.begin(), expected_edges.end());
    EXPECT_TRUE(std::includes(found.edge_edge.begin(), found.edge_edge.end(),
                              expected_edges.begin(), expected_edges.end()));
    EXPECT_GE(found.size(), plain.find(mesh.rest_positions, 0.05).size());
  }
}

}  // namespace
}  // namespace untangle

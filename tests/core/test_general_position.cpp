// General position: nudge_edge_ends moves exactly the ends of the edges it is given, each by the
// distance asked, leaves pinned vertices, and depends on neither the order of the edges nor
// anything but the vertex and the round; after one nudge a crossing that ran exactly through a
// mesh edge is found whole by the narrow phase (no dropped hit, both ends of its segment, the
// pair of an independent all-pairs test).
#include <gtest/gtest.h>

#include <algorithm>

#include "support/brute_force.hpp"
#include "support/small_meshes.hpp"
#include "untangle/general_position.hpp"
#include "untangle/narrow_phase.hpp"

namespace untangle {
namespace {

// A vertical triangle whose edge (3, 4) passes exactly through the edge (0, 1) of a flat one at
// (0.5, 0, 0): the two cut each other along the segment from there to (0.5, 0.5, 0), where the
// flat triangle's third edge crosses the vertical one strictly inside.
std::vector<PolygonMesh> crossing_through_an_edge() {
  return {test::triangles({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, {{0, 1, 2}}),
          test::triangles({{0.5, 0, -1}, {0.5, 0, 1}, {0.5, 1, 0}}, {{0, 1, 2}})};
}

TEST(GeneralPosition, MovesExactlyTheEdgeEndsByTheDistanceAndLeavesPins) {
  const ClothMesh mesh = ClothMesh::build(std::vector<PolygonMesh>{test::grid(4, 4, 0.1)});
  const Positions x = mesh.rest_positions;
  std::vector<double> inverse_mass(x.size(), 1.0);
  const Index pinned = mesh.edges[5].vertices[0];
  inverse_mass[pinned] = 0;
  std::vector<Index> edges = {2, 5, 9};
  Positions nudged = x;
  const std::size_t moved = nudge_edge_ends(mesh, edges, inverse_mass, 1e-6, 0, nudged);
  std::vector<Index> ends;
  for (Index e : edges) {
    for (Index v : mesh.edges[e].vertices) ends.push_back(v);
  }
  std::sort(ends.begin(), ends.end());
  ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
  EXPECT_EQ(moved, ends.size() - 1);  // the pinned end stays
  for (Index v = 0; v < x.size(); ++v) {
    const bool end = std::binary_search(ends.begin(), ends.end(), v);
    if (end && v != pinned) {
      EXPECT_NEAR((nudged[v] - x[v]).norm(), 1e-6, 1e-15) << v;
    } else {
      EXPECT_EQ(nudged[v], x[v]) << v;
    }
  }
  // The order of the edges does not matter; the round does.
  std::reverse(edges.begin(), edges.end());
  Positions reversed = x, next_round = x;
  nudge_edge_ends(mesh, edges, inverse_mass, 1e-6, 0, reversed);
  nudge_edge_ends(mesh, edges, inverse_mass, 1e-6, 1, next_round);
  EXPECT_EQ(reversed, nudged);
  EXPECT_NE(next_round, nudged);
}

TEST(GeneralPosition, ACrossingThroughAnEdgeIsFoundWholeAfterOneNudge) {
  const auto pieces = crossing_through_an_edge();
  const ClothMesh mesh = ClothMesh::build(pieces);
  Positions x = test::concatenated_positions(pieces);
  Intersections found = find_intersections(mesh, Bvh(mesh, x), x);
  // The segment's end through the edge is dropped: one hit, a contour segment without its end.
  ASSERT_EQ(found.pairs.size(), 1u);
  ASSERT_EQ(found.hits.size(), 1u);
  ASSERT_FALSE(found.dropped_edges.empty());
  nudge_edge_ends(mesh, found.dropped_edges, std::vector<double>(x.size(), 1.0), 1e-7, 0, x);
  found = find_intersections(mesh, Bvh(mesh, x), x);
  EXPECT_EQ(found.dropped_hits, 0u);
  EXPECT_EQ(found.pairs, test::brute_force_pairs(mesh, x));
  EXPECT_EQ(found.pairs.size(), 1u);
  EXPECT_EQ(found.hits.size(), 2u);  // the segment whole: one hit at each end
}

}  // namespace
}  // namespace untangle

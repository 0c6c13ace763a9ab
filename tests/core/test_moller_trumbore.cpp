// intersect_edge_triangle (Moller-Trumbore as the narrow phase runs it): a hit strictly inside
// by hand, hits through a vertex or an edge and edge ends on the plane dropped, parallel edges
// and misses none.
#include <gtest/gtest.h>

#include "untangle/narrow_phase.hpp"

namespace untangle {
namespace {

const Vec3 kA(0, 0, 0), kB(1, 0, 0), kC(0, 1, 0);

TEST(MollerTrumbore, CrossingInsideMatchesHandComputation) {
  Hit hit;
  hit.edge = 7;
  hit.triangle = 3;
  ASSERT_EQ(intersect_edge_triangle({0.2, 0.3, -1}, {0.2, 0.3, 3}, kA, kB, kC, hit),
            EdgeTriangleResult::kHit);
  EXPECT_NEAR(hit.t, 0.25, 1e-15);
  EXPECT_TRUE(hit.point.isApprox(Vec3(0.2, 0.3, 0), 1e-14));
  EXPECT_TRUE(hit.barycentric.isApprox(Vec3(0.5, 0.2, 0.3), 1e-14));
  EXPECT_EQ(hit.edge, 7u) << "the caller's edge and triangle stay";
  EXPECT_EQ(hit.triangle, 3u);
}

TEST(MollerTrumbore, ThroughAVertexOrAnEdgeOrEndingOnThePlaneIsDropped) {
  Hit hit;
  EXPECT_EQ(intersect_edge_triangle({0, 0, -1}, {0, 0, 1}, kA, kB, kC, hit),
            EdgeTriangleResult::kDropped);  // through corner a
  EXPECT_EQ(intersect_edge_triangle({0.5, 0, -1}, {0.5, 0, 1}, kA, kB, kC, hit),
            EdgeTriangleResult::kDropped);  // through edge a-b
  EXPECT_EQ(intersect_edge_triangle({0.2, 0.3, 0}, {0.2, 0.3, 1}, kA, kB, kC, hit),
            EdgeTriangleResult::kDropped);  // the edge ends on the triangle
}

TEST(MollerTrumbore, ParallelEdgesAndMissesAreNone) {
  Hit hit;
  EXPECT_EQ(intersect_edge_triangle({0.1, 0.1, 0}, {0.3, 0.3, 0}, kA, kB, kC, hit),
            EdgeTriangleResult::kNone);  // in the plane
  EXPECT_EQ(intersect_edge_triangle({0.1, 0.1, 1}, {0.3, 0.3, 1}, kA, kB, kC, hit),
            EdgeTriangleResult::kNone);  // parallel above
  EXPECT_EQ(intersect_edge_triangle({0.8, 0.8, -1}, {0.8, 0.8, 1}, kA, kB, kC, hit),
            EdgeTriangleResult::kNone);  // beyond the hypotenuse
  EXPECT_EQ(intersect_edge_triangle({0.2, 0.3, 0.5}, {0.2, 0.3, 3}, kA, kB, kC, hit),
            EdgeTriangleResult::kNone);  // stops short of the plane
}

}  // namespace
}  // namespace untangle

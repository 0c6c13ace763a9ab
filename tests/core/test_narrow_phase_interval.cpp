// The narrow phase's interval test (Moller 1997) on the line two triangle planes share: it
// rejects triangles whose crossings lie apart there, and never a pair with a hit or a dropped
// hit, down to gaps far below the triangles' size.
#include <gtest/gtest.h>

#include <cmath>

#include "support/brute_force.hpp"
#include "support/small_meshes.hpp"

namespace untangle {
namespace {

using test::TwoTriangles;

// Each triangle crosses the other's plane, and along the line the planes share the crossings are
// apart by a gap or overlap by it: the interval test must reject the first, never the second,
// down to gaps far below the triangles' size, turned and far from the origin.
TEST(NarrowPhase, CrossingsApartOrOverlappingAlongTheSharedLine) {
  const Eigen::Matrix3d turn =
      (Eigen::AngleAxisd(0.7, Vec3(1, 2, 3).normalized()) * Eigen::AngleAxisd(0.3, Vec3::UnitX()))
          .toRotationMatrix();
  for (const double offset : {0.0, 1000.0}) {
    for (const double gap : {1e-2, 1e-4, 1e-6, 1e-8, -1e-8, -1e-6, -1e-4, -1e-2}) {
      // A meets the plane y = 0.3 along x in [0, 0.7]; B meets z = 0 along x in [0.7 + gap, 2].
      std::vector<Vec3> corners = {{0, 0, 0},           {1, 0, 0},
                                   {0, 1, 0},           {0.7 + gap, 0.3, -1},
                                   {0.7 + gap, 0.3, 1}, {2, 0.3, 0.1}};
      for (Vec3& c : corners) c = turn * c + Vec3::Constant(offset);
      const TwoTriangles two(corners);
      const Intersections& found = two.found;
      SCOPED_TRACE(::testing::Message() << "gap " << gap << ", offset " << offset);
      EXPECT_EQ(found.pairs, test::brute_force_pairs(two.mesh, two.x));
      if (std::abs(gap) >= 1e-6) {
        EXPECT_EQ(found.pairs.size(), gap < 0 ? 1u : 0u);
      }
    }
  }
}

// A grazing crossing: A's edge meets B 1e-11 outside B's border (a dropped hit, within the hit
// tolerance), and A's plane cuts B close to B's corner (1,0,0), where 1e-10 of B's barycentric
// coordinates reaches 1e-4 along the planes' shared line. The interval test must leave such a
// pair to the edge tests (it rejected it when its margin ignored that reach).
TEST(NarrowPhase, AGrazingDroppedHitIsNotRejectedByTheIntervalTest) {
  const double s = 1e-6;  // A lies in the plane y = s (x - 0.5)
  std::vector<Vec3> corners = {
      {0.49999, -1e-11, 1}, {0.49999, -1e-11, -1}, {-0.5, -s, -1}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
  // Turned, so that no axis of the volumes separates A (y < 0) from B (y >= 0) by the 1e-11.
  const Eigen::Matrix3d turn =
      Eigen::AngleAxisd(0.7, Vec3(1, 2, 3).normalized()).toRotationMatrix();
  for (Vec3& c : corners) c = turn * c;
  const Intersections found = TwoTriangles(corners).found;
  EXPECT_TRUE(found.pairs.empty());
  EXPECT_EQ(found.dropped_hits, 1u);
}

}  // namespace
}  // namespace untangle

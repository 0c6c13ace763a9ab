// closest_points_of_segments (edge-edge distance, core/src/proximity/edge_edge_distance.cpp)
// against dense sampling, degenerate segments included.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "untangle/proximity.hpp"

namespace untangle {
namespace {

Vec3 random_point(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  return Vec3(u(rng), u(rng), u(rng));
}

TEST(EdgeEdgeDistance, ClosestPointsOfSegmentsMatchSampling) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    const Vec3 a0 = random_point(rng), a1 = random_point(rng);
    const Vec3 b0 = random_point(rng), b1 = trial % 10 == 0 ? b0 : random_point(rng);
    double s = -1, t = -1;
    closest_points_of_segments(a0, a1, b0, b1, s, t);
    ASSERT_GE(s, 0);
    ASSERT_LE(s, 1);
    ASSERT_GE(t, 0);
    ASSERT_LE(t, 1);
    const double d = ((a0 + s * (a1 - a0)) - (b0 + t * (b1 - b0))).norm();
    double best = 1e300;
    for (int i = 0; i <= 200; ++i) {
      for (int j = 0; j <= 200; ++j) {
        best = std::min(best, ((a0 + i / 200.0 * (a1 - a0)) - (b0 + j / 200.0 * (b1 - b0))).norm());
      }
    }
    EXPECT_LE(d, best + 1e-12);
    EXPECT_GE(d, best - 0.02);
  }
}

}  // namespace
}  // namespace untangle

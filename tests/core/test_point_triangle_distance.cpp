// closest_point_on_triangle (point-triangle distance, core/src/proximity/
// point_triangle_distance.cpp) against dense sampling, and on degenerate triangles.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <random>

#include "untangle/proximity.hpp"

namespace untangle {
namespace {

Vec3 random_point(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  return Vec3(u(rng), u(rng), u(rng));
}

// A triangle with two equal corners (or all three) is a segment (or a point): the closest point
// is that of the segment, computed here by projection, and never NaN.
TEST(PointTriangleDistance, ClosestPointOnADegenerateTriangleIsThatOfItsSegment) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    const Vec3 u = random_point(rng), v = random_point(rng), p = 2 * random_point(rng);
    const double along = std::clamp((p - u).dot(v - u) / (v - u).squaredNorm(), 0.0, 1.0);
    const double expected = (p - (u + along * (v - u))).norm();
    for (const auto& corners : {std::array<Vec3, 3>{u, u, v}, std::array<Vec3, 3>{u, v, v},
                                std::array<Vec3, 3>{u, v, u}, std::array<Vec3, 3>{v, u, u}}) {
      Vec3 bary;
      const Vec3 q = closest_point_on_triangle(p, corners[0], corners[1], corners[2], bary);
      ASSERT_TRUE(q.allFinite() && bary.allFinite());
      EXPECT_NEAR((p - q).norm(), expected, 1e-12);
      EXPECT_NEAR(bary.sum(), 1, 1e-12);
    }
    Vec3 bary;
    const Vec3 q = closest_point_on_triangle(p, u, u, u, bary);
    EXPECT_EQ(q, u);
  }
}

TEST(PointTriangleDistance, ClosestPointOnTriangleIsNoFartherThanAnySample) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const Vec3 a = random_point(rng), b = random_point(rng), c = random_point(rng);
    const Vec3 p = 2 * random_point(rng);
    Vec3 bary;
    const Vec3 q = closest_point_on_triangle(p, a, b, c, bary);
    EXPECT_NEAR(bary.sum(), 1, 1e-12);
    EXPECT_GE(bary.minCoeff(), -1e-12);
    EXPECT_LT((bary[0] * a + bary[1] * b + bary[2] * c - q).norm(), 1e-12);
    double best = 1e300;
    constexpr int kSteps = 120;
    for (int i = 0; i <= kSteps; ++i) {
      for (int j = 0; i + j <= kSteps; ++j) {
        const double u = double(i) / kSteps, v = double(j) / kSteps;
        best = std::min(best, (p - ((1 - u - v) * a + u * b + v * c)).norm());
      }
    }
    EXPECT_LE((p - q).norm(), best + 1e-12);
    EXPECT_GE((p - q).norm(), best - 0.02);  // the sampling step bounds how close it gets
  }
}

}  // namespace
}  // namespace untangle

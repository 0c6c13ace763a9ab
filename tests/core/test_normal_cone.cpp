// NormalCone: merge contains every direction of both cones and is no wider than needed, both
// measured with acos independently of the cone's cosine arithmetic; a tree of merges contains
// every normal below it; two normals merge into the cone of half their angle; the right-angle
// test; degenerate triangles give "any direction".
#include "untangle/normal_cone.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <vector>

namespace untangle {
namespace {

Vec3 random_unit(std::mt19937_64& rng) {
  std::normal_distribution<double> g;
  return Vec3(g(rng), g(rng), g(rng)).normalized();
}

double angle_between(const Vec3& a, const Vec3& b) {
  return std::acos(std::clamp(a.dot(b), -1.0, 1.0));
}

double half_angle(const NormalCone& c) {
  return std::acos(c.cos_half);
}

NormalCone cone(const Vec3& axis, double half_angle) {
  return {axis, std::cos(half_angle)};
}

// A direction on the rim of a cone of the given half-angle.
Vec3 on_rim(const Vec3& axis, double half, double around) {
  const Vec3 u = axis.unitOrthogonal();
  const Vec3 v = axis.cross(u);
  const Vec3 side = std::cos(around) * u + std::sin(around) * v;
  return std::cos(half) * axis + std::sin(half) * side;
}

// Contained without tolerance: the angle from the axis, by acos, within the half-angle.
::testing::AssertionResult within(const NormalCone& c, const Vec3& direction) {
  if (c.is_any() || angle_between(c.axis, direction) <= half_angle(c)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "angle " << angle_between(c.axis, direction) << " > half-angle " << half_angle(c);
}

TEST(NormalCone, MergeContainsBothConesAndIsNoWiderThanNeeded) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> angle(0, 1.2);
  int narrow = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const double alpha = trial % 5 == 0 ? 0 : angle(rng);
    const double beta = trial % 7 == 0 ? 0 : angle(rng);
    const Vec3 axis_a = random_unit(rng);
    // Every other trial close axes, where the turn between them is small.
    const Vec3 axis_b =
        trial % 2 ? (axis_a + 0.05 * random_unit(rng)).normalized() : random_unit(rng);
    const NormalCone m = NormalCone::merge(cone(axis_a, alpha), cone(axis_b, beta));
    const double between = angle_between(axis_a, axis_b);
    const double needed = std::max({alpha, beta, 0.5 * (between + alpha + beta)});
    if (m.is_any()) {
      // Only when no cone under 90 degrees holds both.
      EXPECT_GT(needed, 0.5 * std::numbers::pi - 1e-6);
      continue;
    }
    ++narrow;
    EXPECT_NEAR(m.axis.norm(), 1, 1e-12);
    EXPECT_TRUE(m.narrower_than_right_angle());
    for (int k = 0; k < 16; ++k) {
      const double around = 2 * std::numbers::pi * k / 16;
      EXPECT_TRUE(within(m, on_rim(axis_a, alpha, around))) << "trial " << trial;
      EXPECT_TRUE(within(m, on_rim(axis_b, beta, around))) << "trial " << trial;
    }
    EXPECT_LE(half_angle(m), needed + 1e-5) << "trial " << trial;
  }
  EXPECT_GT(narrow, 1000);
}

// What the refit builds: cones of triangle normals merged up a binary tree. Every normal lies in
// the root cone (and in every cone above it), by acos, without tolerance.
TEST(NormalCone, TreeOfMergesContainsEveryNormalBelow) {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 200; ++trial) {
    const Vec3 centre = random_unit(rng);
    const double spread = 0.02 + 0.6 * (trial % 10) / 10.0;
    std::vector<Vec3> normals(64);
    for (Vec3& n : normals) n = (centre + spread * random_unit(rng)).normalized();
    std::vector<NormalCone> level;
    for (std::size_t i = 0; i < normals.size(); i += 2) {
      level.push_back(NormalCone::of_two(NormalCone::from_normal(normals[i]),
                                         NormalCone::from_normal(normals[i + 1])));
    }
    int depth = 1;
    while (level.size() > 1) {
      std::vector<NormalCone> up;
      for (std::size_t i = 0; i < level.size(); i += 2) {
        up.push_back(NormalCone::merge(level[i], level[i + 1]));
      }
      level = std::move(up);
      ++depth;
      const std::size_t leaves = std::size_t{2} << (depth - 1);
      for (std::size_t c = 0; c < level.size(); ++c) {
        for (std::size_t i = c * leaves; i < (c + 1) * leaves; ++i) {
          EXPECT_TRUE(within(level[c], normals[i])) << "trial " << trial << " depth " << depth;
        }
      }
    }
    // Normals within about 35 degrees of the centre: a narrow root.
    if (spread < 0.3) {
      EXPECT_TRUE(level[0].narrower_than_right_angle()) << "trial " << trial;
    }
  }
}

TEST(NormalCone, TwoNormalsMergeIntoHalfTheirAngle) {
  const double angle = 1.0;
  const NormalCone a = NormalCone::from_normal(Vec3(1, 0, 0));
  const NormalCone b = NormalCone::from_normal(Vec3(std::cos(angle), std::sin(angle), 0));
  const NormalCone m = NormalCone::merge(a, b);
  EXPECT_NEAR(half_angle(m), angle / 2, 1e-5);
  EXPECT_TRUE(m.axis.isApprox(Vec3(std::cos(angle / 2), std::sin(angle / 2), 0), 1e-12));
  // A cone inside another merges into the larger one.
  const NormalCone wide = cone(Vec3(0, 0, 1), 1.0);
  const NormalCone inside = cone(Vec3(std::sin(0.2), 0, std::cos(0.2)), 0.3);
  EXPECT_NEAR(half_angle(NormalCone::merge(wide, inside)), 1.0, 1e-9);
  EXPECT_NEAR(half_angle(NormalCone::merge(inside, wide)), 1.0, 1e-9);
  EXPECT_TRUE(NormalCone::merge(inside, wide).axis.isApprox(Vec3::UnitZ()));
}

// The two-normal cone of a quad leaf: it contains both normals (by acos, no tolerance), is half
// their angle wide, and agrees with merge; opposite normals give "any direction".
TEST(NormalCone, OfTwoNormalsContainsBothAndMatchesMerge) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 2000; ++trial) {
    const Vec3 n1 = random_unit(rng);
    const Vec3 n2 = trial % 3 == 0 ? (n1 + 0.3 * random_unit(rng)).normalized() : random_unit(rng);
    const NormalCone c =
        NormalCone::of_two(NormalCone::from_normal(n1), NormalCone::from_normal(n2));
    if (c.is_any()) {
      EXPECT_LT((n1 + n2).norm(), 1e-5);
      continue;
    }
    EXPECT_TRUE(within(c, n1));
    EXPECT_TRUE(within(c, n2));
    const double between = angle_between(n1, n2);
    EXPECT_NEAR(half_angle(c), between / 2, 1e-5);
    const NormalCone m =
        NormalCone::merge(NormalCone::from_normal(n1), NormalCone::from_normal(n2));
    if (between < 3) {
      ASSERT_FALSE(m.is_any() && between < 0.5 * std::numbers::pi - 1e-3);
      if (!m.is_any()) {
        EXPECT_TRUE(c.axis.isApprox(m.axis, 1e-8));
      }
    }
  }
  const NormalCone opposite = NormalCone::of_two(NormalCone::from_normal(Vec3(0, 0, 1)),
                                                 NormalCone::from_normal(Vec3(0, 0, -1)));
  EXPECT_TRUE(opposite.is_any());
}

TEST(NormalCone, RightAngleTestAndOppositeNormals) {
  EXPECT_TRUE(cone(Vec3::UnitZ(), 1.5).narrower_than_right_angle());
  EXPECT_FALSE((NormalCone{Vec3::UnitZ(), 0.0}).narrower_than_right_angle());
  const NormalCone up = NormalCone::from_normal(Vec3::UnitZ());
  const NormalCone down = NormalCone::from_normal(-Vec3::UnitZ());
  EXPECT_FALSE(NormalCone::merge(up, down).narrower_than_right_angle());
  // Two normals 100 degrees apart: the cone is 50 degrees; with a third opposite one, not.
  const double a = 100 * std::numbers::pi / 180;
  const NormalCone tilted = NormalCone::from_normal(Vec3(std::sin(a), 0, std::cos(a)));
  const NormalCone pair = NormalCone::merge(up, tilted);
  EXPECT_TRUE(pair.narrower_than_right_angle());
  EXPECT_NEAR(half_angle(pair), a / 2, 1e-5);
  EXPECT_FALSE(NormalCone::merge(pair, NormalCone::from_normal(Vec3(-1, 0, -1).normalized()))
                   .narrower_than_right_angle());
  // Two normals 179 degrees apart need a cone of 89.5 degrees: still under 90.
  const double b = 179 * std::numbers::pi / 180;
  EXPECT_TRUE(NormalCone::merge(up, NormalCone::from_normal(Vec3(std::sin(b), 0, std::cos(b))))
                  .narrower_than_right_angle());
}

TEST(NormalCone, TriangleConeIsItsUnitNormalOrAnyWhenDegenerate) {
  const NormalCone c = NormalCone::from_triangle({0, 0, 0}, {2, 0, 0}, {0, 3, 0});
  EXPECT_TRUE(c.axis.isApprox(Vec3::UnitZ()));
  EXPECT_EQ(c.cos_half, 1);
  const NormalCone degenerate = NormalCone::from_triangle({0, 0, 0}, {1, 1, 1}, {2, 2, 2});
  EXPECT_TRUE(degenerate.is_any());
  EXPECT_FALSE(degenerate.narrower_than_right_angle());
  EXPECT_TRUE(NormalCone::merge(c, degenerate).is_any());
}

// Axes equal up to rounding have no common plane; the merge must still be the narrow cone
// (this once came out as "any direction" and stopped all culling on curved sheets).
TEST(NormalCone, NearlyEqualAxesMergeNarrowly) {
  const NormalCone a = cone(Vec3::UnitZ(), 0.3);
  const Vec3 axis_b = Vec3(1e-15, 0, 1).normalized();
  const NormalCone b = cone(axis_b, 0.3 + 1e-13);
  const NormalCone m = NormalCone::merge(a, b);
  EXPECT_NEAR(half_angle(m), 0.3, 1e-5);
  EXPECT_TRUE(within(m, on_rim(axis_b, 0.3 + 1e-13, 0.7)));
}

}  // namespace
}  // namespace untangle

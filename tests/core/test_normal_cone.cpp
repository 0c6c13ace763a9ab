// NormalCone: merge contains every direction of both cones; two normals merge into the cone
// of half their angle; the right-angle test; degenerate triangles give "any direction".
#include "untangle/normal_cone.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>

namespace untangle {
namespace {

Vec3 random_unit(std::mt19937_64& rng) {
  std::normal_distribution<double> g;
  return Vec3(g(rng), g(rng), g(rng)).normalized();
}

// A direction on the rim of the cone (at exactly its half-angle from the axis).
Vec3 on_rim(const NormalCone& c, double around) {
  const Vec3 u = c.axis.unitOrthogonal();
  const Vec3 v = c.axis.cross(u);
  const Vec3 side = std::cos(around) * u + std::sin(around) * v;
  return std::cos(c.half_angle) * c.axis + std::sin(c.half_angle) * side;
}

TEST(NormalCone, MergeContainsBothCones) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> angle(0, 1.2);
  for (int trial = 0; trial < 500; ++trial) {
    const NormalCone a{random_unit(rng), angle(rng)};
    const NormalCone b{random_unit(rng), angle(rng)};
    const NormalCone m = NormalCone::merge(a, b);
    if (m.half_angle >= NormalCone::kAnyAngle) continue;
    EXPECT_NEAR(m.axis.norm(), 1, 1e-12);
    for (int k = 0; k < 16; ++k) {
      const double around = 2 * std::numbers::pi * k / 16;
      EXPECT_TRUE(m.contains(on_rim(a, around), 1e-9));
      EXPECT_TRUE(m.contains(on_rim(b, around), 1e-9));
    }
    // Not wider than needed: at most the sum of the angle between the axes and both halves.
    const double between = std::acos(std::clamp(a.axis.dot(b.axis), -1.0, 1.0));
    EXPECT_LE(m.half_angle, std::max({a.half_angle, b.half_angle,
                                      0.5 * (between + a.half_angle + b.half_angle)}) +
                                1e-9);
  }
}

TEST(NormalCone, TwoNormalsMergeIntoHalfTheirAngle) {
  const double angle = 1.0;
  const NormalCone a = NormalCone::from_normal(Vec3(1, 0, 0));
  const NormalCone b = NormalCone::from_normal(Vec3(std::cos(angle), std::sin(angle), 0));
  const NormalCone m = NormalCone::merge(a, b);
  EXPECT_NEAR(m.half_angle, angle / 2, 1e-9);
  EXPECT_TRUE(m.axis.isApprox(Vec3(std::cos(angle / 2), std::sin(angle / 2), 0), 1e-12));
  // A cone inside another merges into the larger one.
  const NormalCone wide{Vec3(0, 0, 1), 1.0};
  const NormalCone inside{Vec3(std::sin(0.2), 0, std::cos(0.2)), 0.3};
  EXPECT_NEAR(NormalCone::merge(wide, inside).half_angle, 1.0, 1e-12);
  EXPECT_NEAR(NormalCone::merge(inside, wide).half_angle, 1.0, 1e-12);
}

// The two-normal cone of a quad leaf: it contains both normals (no tolerance beyond rounding),
// is half their angle wide, and agrees with merge; opposite normals give "any direction".
TEST(NormalCone, OfTwoNormalsContainsBothAndMatchesMerge) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 2000; ++trial) {
    const Vec3 n1 = random_unit(rng);
    const Vec3 n2 = trial % 3 == 0 ? (n1 + 0.3 * random_unit(rng)).normalized() : random_unit(rng);
    const NormalCone c =
        NormalCone::of_two(NormalCone::from_normal(n1), NormalCone::from_normal(n2));
    if (c.half_angle >= NormalCone::kAnyAngle) {
      EXPECT_LT((n1 + n2).norm(), 1e-5);
      continue;
    }
    EXPECT_TRUE(c.contains(n1, 0));
    EXPECT_TRUE(c.contains(n2, 0));
    const double between = std::acos(std::clamp(n1.dot(n2), -1.0, 1.0));
    EXPECT_NEAR(c.half_angle, between / 2, 1e-9);
    const NormalCone m =
        NormalCone::merge(NormalCone::from_normal(n1), NormalCone::from_normal(n2));
    if (between < 3) {
      EXPECT_TRUE(c.axis.isApprox(m.axis, 1e-8));
    }
  }
  const NormalCone opposite = NormalCone::of_two(NormalCone::from_normal(Vec3(0, 0, 1)),
                                                 NormalCone::from_normal(Vec3(0, 0, -1)));
  EXPECT_GE(opposite.half_angle, NormalCone::kAnyAngle);
}

TEST(NormalCone, RightAngleTestAndOppositeNormals) {
  EXPECT_TRUE((NormalCone{Vec3::UnitZ(), 1.5}).narrower_than_right_angle());
  EXPECT_FALSE((NormalCone{Vec3::UnitZ(), std::numbers::pi / 2}).narrower_than_right_angle());
  const NormalCone up = NormalCone::from_normal(Vec3::UnitZ());
  const NormalCone down = NormalCone::from_normal(-Vec3::UnitZ());
  EXPECT_FALSE(NormalCone::merge(up, down).narrower_than_right_angle());
  // Two normals 100 degrees apart: the cone is 50 degrees; with a third opposite one, not.
  const double a = 100 * std::numbers::pi / 180;
  const NormalCone tilted = NormalCone::from_normal(Vec3(std::sin(a), 0, std::cos(a)));
  const NormalCone pair = NormalCone::merge(up, tilted);
  EXPECT_TRUE(pair.narrower_than_right_angle());
  EXPECT_FALSE(NormalCone::merge(pair, NormalCone::from_normal(Vec3(-1, 0, -1).normalized()))
                   .narrower_than_right_angle());
}

TEST(NormalCone, TriangleConeIsItsUnitNormalOrAnyWhenDegenerate) {
  const NormalCone c = NormalCone::from_triangle({0, 0, 0}, {2, 0, 0}, {0, 3, 0});
  EXPECT_TRUE(c.axis.isApprox(Vec3::UnitZ()));
  EXPECT_EQ(c.half_angle, 0);
  const NormalCone degenerate = NormalCone::from_triangle({0, 0, 0}, {1, 1, 1}, {2, 2, 2});
  EXPECT_GE(degenerate.half_angle, NormalCone::kAnyAngle);
  EXPECT_FALSE(degenerate.narrower_than_right_angle());
  EXPECT_GE(NormalCone::merge(c, degenerate).half_angle, NormalCone::kAnyAngle);
}

// Axes equal up to rounding have no common plane; the merge must still be the narrow cone
// (this once came out as "any direction" and stopped all culling on curved sheets).
TEST(NormalCone, NearlyEqualAxesMergeNarrowly) {
  const NormalCone a{Vec3::UnitZ(), 0.3};
  const NormalCone b{Vec3(1e-15, 0, 1).normalized(), 0.3 + 1e-13};
  const NormalCone m = NormalCone::merge(a, b);
  EXPECT_NEAR(m.half_angle, 0.3, 1e-9);
  EXPECT_TRUE(m.contains(on_rim(b, 0.7), 1e-12));
}

}  // namespace
}  // namespace untangle

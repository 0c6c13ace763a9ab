// Kdop18: overlap agrees with the separating-axis answer computed directly from the point sets
// along the 9 axes; merge contains both; inflate reaches every point within the distance.
#include "untangle/kdop.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace untangle {
namespace {

// The 9 axes written out here, independently of the library's table.
std::vector<Vec3> reference_axes() {
  const double s = 1 / std::sqrt(2.0);
  return {{1, 0, 0}, {0, 1, 0},  {0, 0, 1}, {s, s, 0}, {s, -s, 0},
          {s, 0, s}, {s, 0, -s}, {0, s, s}, {0, s, -s}};
}

std::vector<Vec3> random_points(std::mt19937_64& rng, const Vec3& centre, double spread) {
  std::uniform_real_distribution<double> u(-spread, spread);
  std::vector<Vec3> points(5);
  for (Vec3& p : points) p = centre + Vec3(u(rng), u(rng), u(rng));
  return points;
}

Kdop18 kdop_of(const std::vector<Vec3>& points) {
  Kdop18 k;
  for (const Vec3& p : points) k.add(p);
  return k;
}

// The single-precision copy the traversal reads contains the double volume on every axis, so a
// pair that overlaps in double overlaps in float too; it stays tight (a few float steps). Bounds
// at all scales and signs, zero and values just off a float included.
TEST(Kdop18f, RoundsOutwardsAndKeepsEveryOverlap) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> exponent(-40.0, 30.0);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (int trial = 0; trial < 20000; ++trial) {
    Kdop18 k;
    for (int axis = 0; axis < Kdop18::kAxes; ++axis) {
      const double a = trial % 7 == 0 ? 0.0 : unit(rng) * std::pow(2.0, exponent(rng));
      const double b = trial % 5 == 0 ? static_cast<double>(static_cast<float>(a)) + 1e-300
                                      : a + std::abs(unit(rng)) * std::pow(2.0, exponent(rng));
      k.min[axis] = std::min(a, b);
      k.max[axis] = std::max(a, b);
    }
    const Kdop18f f(k);
    for (int axis = 0; axis < Kdop18::kAxes; ++axis) {
      ASSERT_LE(static_cast<double>(f.min[axis]), k.min[axis]);
      ASSERT_GE(static_cast<double>(f.max[axis]), k.max[axis]);
      const double scale = std::max(std::abs(k.min[axis]), std::abs(k.max[axis]));
      EXPECT_LE(static_cast<double>(f.max[axis]) - k.max[axis], 1e-6 * scale + 1e-29);
      EXPECT_LE(k.min[axis] - static_cast<double>(f.min[axis]), 1e-6 * scale + 1e-29);
    }
  }
  std::uniform_real_distribution<double> offset(-2.0, 2.0);
  for (int trial = 0; trial < 2000; ++trial) {
    const Kdop18 a = kdop_of(random_points(rng, Vec3::Zero(), 1.0));
    const Kdop18 b = kdop_of(random_points(rng, Vec3(offset(rng), offset(rng), offset(rng)), 1.0));
    if (a.overlaps(b)) {
      EXPECT_TRUE(Kdop18f(a).overlaps(Kdop18f(b)));
    }
  }
}

TEST(Kdop18, OverlapMatchesProjectedIntervalsOfThePointSets) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> offset(-2.0, 2.0);
  int overlapping = 0, separated = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const auto a = random_points(rng, Vec3::Zero(), 1.0);
    const auto b = random_points(rng, Vec3(offset(rng), offset(rng), offset(rng)), 1.0);
    bool expected = true;
    for (const Vec3& axis : reference_axes()) {
      double amin = 1e300, amax = -1e300, bmin = 1e300, bmax = -1e300;
      for (const Vec3& p : a) {
        amin = std::min(amin, p.dot(axis));
        amax = std::max(amax, p.dot(axis));
      }
      for (const Vec3& p : b) {
        bmin = std::min(bmin, p.dot(axis));
        bmax = std::max(bmax, p.dot(axis));
      }
      if (amax < bmin || bmax < amin) expected = false;
    }
    const Kdop18 ka = kdop_of(a), kb = kdop_of(b);
    EXPECT_EQ(ka.overlaps(kb), expected);
    EXPECT_EQ(kb.overlaps(ka), expected);
    (expected ? overlapping : separated)++;
  }
  EXPECT_GT(overlapping, 200);
  EXPECT_GT(separated, 200);
}

// A diagonal slab separates two boxes whose axis-aligned boxes overlap: the 18-DOP sees it.
TEST(Kdop18, DiagonalAxesSeparateWhatABoxCannot) {
  const Kdop18 a = kdop_of({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}});
  const Kdop18 b = kdop_of({{1, 1, 0}, {0.9, 0.9, 0}, {1, 0.7, 0}, {0.7, 1, 0}});
  for (int k = 0; k < 3; ++k) EXPECT_LE(a.min[k], b.max[k]);  // the boxes overlap
  EXPECT_FALSE(a.overlaps(b));                                // x + y separates them
}

TEST(Kdop18, MergeContainsBothAndEmptyIsNeutral) {
  std::mt19937_64 rng(4);
  for (int trial = 0; trial < 200; ++trial) {
    const auto a = random_points(rng, Vec3(1, 2, 3), 1.0);
    const auto b = random_points(rng, Vec3(-2, 0, 1), 2.0);
    Kdop18 m = kdop_of(a);
    m.merge(kdop_of(b));
    for (const Vec3& p : a) EXPECT_TRUE(m.contains(p));
    for (const Vec3& p : b) EXPECT_TRUE(m.contains(p));
    Kdop18 e;
    e.merge(m);
    EXPECT_EQ(e.min, m.min);
    EXPECT_EQ(e.max, m.max);
  }
  const Kdop18 empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_FALSE(empty.overlaps(empty));
  EXPECT_FALSE(empty.overlaps(kdop_of({{0, 0, 0}})));
}

// Inflation is in world distance on every axis: each point within distance d of the set (in
// any direction, also along the diagonals) is inside, and the slab widths grow by exactly 2 d.
TEST(Kdop18, InflateGrowsByTheWorldDistance) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> g;
  const auto points = random_points(rng, Vec3::Zero(), 1.0);
  const double d = 0.3;
  Kdop18 k = kdop_of(points);
  const Kdop18 tight = k;
  k.inflate(d);
  for (int axis = 0; axis < Kdop18::kAxes; ++axis) {
    EXPECT_NEAR(k.max[axis] - k.min[axis], tight.max[axis] - tight.min[axis] + 2 * d, 1e-12);
  }
  for (int trial = 0; trial < 2000; ++trial) {
    const Vec3 dir = Vec3(g(rng), g(rng), g(rng)).normalized();
    const Vec3& p = points[static_cast<std::size_t>(trial) % points.size()];
    EXPECT_TRUE(k.contains(p + 0.999 * d * dir));
  }
  // Just beyond d along a diagonal axis from the extreme point, it is outside.
  const Vec3 diagonal = Vec3(1, 1, 0).normalized();
  const Vec3* extreme = &points[0];
  for (const Vec3& p : points) {
    if (p.dot(diagonal) > extreme->dot(diagonal)) extreme = &p;
  }
  EXPECT_FALSE(k.contains(*extreme + 1.001 * d * diagonal));
}

TEST(Kdop18, BoxCornersSpanTheAxisAlignedPart) {
  const Kdop18 k = kdop_of({{-1, 2, 0}, {3, 5, -2}});
  const auto corners = k.box_corners();
  Vec3 lo = corners[0], hi = corners[0];
  for (const Vec3& c : corners) {
    lo = lo.cwiseMin(c);
    hi = hi.cwiseMax(c);
  }
  EXPECT_EQ(lo, Vec3(-1, 2, -2));
  EXPECT_EQ(hi, Vec3(3, 5, 0));
}

}  // namespace
}  // namespace untangle

// Portable elementary functions: against libm (an independent implementation) within a few
// units in the last place, on the ranges the scenes and the solver use and beyond.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "untangle/portable_math.hpp"

namespace untangle {
namespace {

// |a - b| within `ulps` units in the last place of the larger, or an absolute 1e-16 near 0.
::testing::AssertionResult close(double a, double b, double ulps) {
  const double scale = std::max(std::abs(a), std::abs(b));
  const double tolerance = std::max(ulps * scale * 0x1.0p-52, 1e-16);
  if (std::abs(a - b) <= tolerance) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << a << " vs " << b << " (difference " << a - b << ")";
}

TEST(PortableMath, CosAndSinOfPiTimesMatchLibm) {
  for (int k = -4000; k <= 4000; ++k) {
    const double s = k * 0.00137;  // -5.5 .. 5.5
    // libm is given pi * s rounded: its result is off by up to an ulp of that argument.
    const double tolerance = 0x1.0p-52 * (4 + 2 * std::abs(std::numbers::pi * s));
    EXPECT_NEAR(portable::cos_pi(s), std::cos(std::numbers::pi * s), tolerance) << "s = " << s;
    EXPECT_NEAR(portable::sin_pi(s), std::sin(std::numbers::pi * s), tolerance) << "s = " << s;
  }
}

TEST(PortableMath, CosOfPiTimesIsExactWhereTheValueIs) {
  EXPECT_EQ(portable::cos_pi(0), 1.0);
  EXPECT_EQ(portable::cos_pi(1), -1.0);
  EXPECT_EQ(portable::cos_pi(-2), 1.0);
  EXPECT_EQ(portable::sin_pi(0.5), 1.0);
  EXPECT_EQ(portable::cos_pi(0.5), 0.0);
  EXPECT_TRUE(close(portable::cos_pi(0.25), std::sqrt(0.5), 1));
}

TEST(PortableMath, ExpMatchesLibm) {
  for (int k = -3000; k <= 3000; ++k) {
    const double x = k * 0.0123;  // -36.9 .. 36.9
    EXPECT_TRUE(close(portable::exp(x), std::exp(x), 4)) << "x = " << x;
  }
  EXPECT_EQ(portable::exp(0), 1.0);
}

TEST(PortableMath, RootIsTheInverseOfThePower) {
  for (int n : {1, 2, 3, 7, 10, 20, 50, 1000}) {
    for (double a : {0.0, 1e-12, 0.05, 0.5, 0.95, 0.999999, 1.0}) {
      const double y = portable::root(a, n);
      EXPECT_TRUE(close(y, std::pow(a, 1.0 / n), 8)) << a << "^(1/" << n << ")";
    }
  }
}

}  // namespace
}  // namespace untangle

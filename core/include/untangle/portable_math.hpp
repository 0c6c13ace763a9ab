// Elementary functions built from + - * / only. glibc picks its libm code per CPU (with or
// without FMA, ...), so std::exp or std::cos can differ in the last bit between two machines
// running the same binary, and a state built from them drifts apart. These give the same bits on
// every IEEE-754 double machine that does not fuse a multiply and an add (see -ffp-contract in
// core/CMakeLists.txt). They are for set-up and per-frame constants, not for hot loops.
#pragma once

#include <cmath>

namespace untangle::portable {

// cos(pi * s) for any finite s, to within an ulp or two.
inline double cos_pi(double s) {
  double u = std::abs(s - 2 * std::nearbyint(0.5 * s));  // in [0, 1]: cos(pi s) is even, period 2
  double sign = 1;
  if (u > 0.5) {  // cos(pi u) = -cos(pi (1 - u))
    u = 1 - u;
    sign = -1;
  }
  // On [0, 1/4] the cosine's series, on (1/4, 1/2] the sine's of pi (1/2 - u): |x| <= pi / 4,
  // where 12 terms leave an error below 1e-22.
  const bool use_sine = u > 0.25;
  const double x = 3.14159265358979323846 * (use_sine ? 0.5 - u : u);
  const double x2 = x * x;
  double term = use_sine ? x : 1, sum = term;
  for (int k = use_sine ? 2 : 1; k < 24; k += 2) {
    term *= -x2 / (k * (k + 1));
    sum += term;
  }
  return sign * sum;
}

// sin(pi * s) = cos(pi (s - 1/2)).
inline double sin_pi(double s) {
  return cos_pi(s - 0.5);
}

// e^x for |x| < 700.
inline double exp(double x) {
  // x = k ln 2 + r with |r| <= ln 2 / 2; ln 2 in two parts so that k * kLn2High is exact.
  constexpr double kLn2High = 6.93147180369123816490e-01, kLn2Low = 1.90821492927058770002e-10;
  const double k = std::nearbyint(x * 1.44269504088896338700);
  const double r = (x - k * kLn2High) - k * kLn2Low;
  double term = 1, sum = 1;
  for (int n = 1; n < 18; ++n) {
    term *= r / n;
    sum += term;
  }
  return std::ldexp(sum, static_cast<int>(k));  // exact
}

// a^(1/n) for a in [0, 1] and n >= 1: Newton's method on y^n = a from y = 1, which decreases
// monotonically to the root; it stops when a step no longer lowers y.
inline double root(double a, int n) {
  if (!(a > 0)) return 0;
  if (a >= 1 || n <= 1) return a >= 1 ? 1 : a;
  auto power = [](double y, int e) {  // y^e by squaring
    double result = 1;
    for (; e > 0; e >>= 1, y *= y) {
      if (e & 1) result *= y;
    }
    return result;
  };
  double y = 1;
  for (int step = 0; step < 100000; ++step) {
    const double y_n1 = power(y, n - 1);
    const double next = y - (y_n1 * y - a) / (n * y_n1);
    if (!(next < y)) break;
    y = next;
  }
  return y;
}

}  // namespace untangle::portable

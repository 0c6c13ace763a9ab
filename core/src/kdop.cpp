#include "untangle/kdop.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace untangle {

namespace {
constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

Kdop18::Kdop18() {
  min.fill(kInf);
  max.fill(-kInf);
}

Vec3 Kdop18::axis(int k) {
  static const std::array<Vec3, kAxes> kAxisDirections = {Vec3(1, 0, 0),
                                                          Vec3(0, 1, 0),
                                                          Vec3(0, 0, 1),
                                                          Vec3(kInvSqrt2, kInvSqrt2, 0),
                                                          Vec3(kInvSqrt2, -kInvSqrt2, 0),
                                                          Vec3(kInvSqrt2, 0, kInvSqrt2),
                                                          Vec3(kInvSqrt2, 0, -kInvSqrt2),
                                                          Vec3(0, kInvSqrt2, kInvSqrt2),
                                                          Vec3(0, kInvSqrt2, -kInvSqrt2)};
  return kAxisDirections.at(static_cast<std::size_t>(k));
}

void Kdop18::inflate(double distance) {
  if (empty()) return;  // an empty volume stays empty (inf - d is still inf)
  for (int k = 0; k < kAxes; ++k) {
    min[k] -= distance;
    max[k] += distance;
  }
}

bool Kdop18::empty() const {
  return !(min[0] <= max[0]);
}

bool Kdop18::contains(const Vec3& p) const {
  const auto d = project(p);
  for (int k = 0; k < kAxes; ++k) {
    if (d[k] < min[k] || d[k] > max[k]) return false;
  }
  return true;
}

std::array<Vec3, 8> Kdop18::box_corners() const {
  std::array<Vec3, 8> corners;
  for (int c = 0; c < 8; ++c) {
    corners[c] =
        Vec3((c & 1) ? max[0] : min[0], (c & 2) ? max[1] : min[1], (c & 4) ? max[2] : min[2]);
  }
  return corners;
}

bool Kdop18f::contains(const Vec3& p) const {
  const auto d = Kdop18::project(p);
  for (int k = 0; k < Kdop18::kAxes; ++k) {
    if (d[k] < min[k] || d[k] > max[k]) return false;
  }
  return true;
}

Kdop18f::Kdop18f(const Kdop18& volume) {
  int k = 0;
#if defined(__SSE2__)
  // float_below and float_above two axes at a time (the refit converts every leaf).
  using namespace float_rounding;
  const __m128d zero = _mm_setzero_pd();
  const __m128d shrink = _mm_set1_pd(1 - kRelative), grow = _mm_set1_pd(1 + kRelative);
  const __m128d absolute = _mm_set1_pd(kAbsolute), largest = _mm_set1_pd(kFloatMax);
  const __m128d lowest = _mm_set1_pd(-kFloatMax);
  auto scale = [&](__m128d x, __m128d positive_factor, __m128d other_factor) {
    const __m128d positive = _mm_cmpgt_pd(x, zero);
    return _mm_mul_pd(
        x, _mm_or_pd(_mm_and_pd(positive, positive_factor), _mm_andnot_pd(positive, other_factor)));
  };
  for (; k + 1 < Kdop18::kAxes; k += 2) {
    const __m128d lo = _mm_loadu_pd(&volume.min[k]);
    const __m128d hi = _mm_loadu_pd(&volume.max[k]);
    const __m128d below = _mm_min_pd(_mm_sub_pd(scale(lo, shrink, grow), absolute), largest);
    const __m128d above = _mm_max_pd(_mm_add_pd(scale(hi, grow, shrink), absolute), lowest);
    _mm_storel_pi(reinterpret_cast<__m64*>(&min[k]), _mm_cvtpd_ps(below));
    _mm_storel_pi(reinterpret_cast<__m64*>(&max[k]), _mm_cvtpd_ps(above));
  }
#endif
  for (; k < Kdop18::kAxes; ++k) {
    min[k] = float_below(volume.min[k]);
    max[k] = float_above(volume.max[k]);
  }
}

}  // namespace untangle

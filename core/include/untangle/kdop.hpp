// Kdop18: an 18-sided discrete oriented polytope, min and max along 9 fixed axes (x, y, z and
// the six diagonals x±y, x±z, y±z). Tighter than a box around sheared cloth, as cheap to test.
// The diagonal axes are normalised, so every slab is measured in world distance.
#pragma once

#include <algorithm>
#include <array>
#include <limits>

#if defined(__SSE2__)
#include <emmintrin.h>
#include <xmmintrin.h>
#endif

#include "untangle/types.hpp"

namespace untangle {

struct Kdop18 {
  static constexpr int kAxes = 9;
  std::array<double, kAxes> min;  // +infinity when empty
  std::array<double, kAxes> max;  // -infinity when empty

  Kdop18();  // empty
  // The coordinates of p along the 9 unit axes (x, y, z, then the diagonals).
  static std::array<double, kAxes> project(const Vec3& p);
  // The unit direction of axis k.
  static Vec3 axis(int k);

  void add(const Vec3& p);  // inline below: the refit's inner loop
  void merge(const Kdop18& other) { grow(other.min, other.max); }
  void inflate(double distance);             // grows every slab by distance (in world units)
  bool overlaps(const Kdop18& other) const;  // inline below: the traversal's inner test
  bool empty() const;
  bool contains(const Vec3& p) const;
  // The 8 corners of the axis-aligned part (axes 0-2), for drawing.
  std::array<Vec3, 8> box_corners() const;

 private:
  void grow(const std::array<double, kAxes>& low, const std::array<double, kAxes>& high);
};

// A Kdop18 rounded outwards to single precision, for the traversal's overlap test: it contains
// the double volume, so a pair that overlaps in double overlaps here too (it may add a pair that
// only touches after rounding, never lose one), in half the bytes. Axes padded to 12 with empty
// slabs [0, 0] that always overlap, so the test runs four axes at a time.
struct alignas(16) Kdop18f {
  static constexpr int kLanes = 12;
  std::array<float, kLanes> min{};
  std::array<float, kLanes> max{};

  explicit Kdop18f(const Kdop18& volume);
  Kdop18f() = default;
  bool overlaps(const Kdop18f& other) const;  // inline below: the traversal's inner test
  bool contains(const Vec3& p) const;         // p's double projections inside every slab
  // Exact in single precision (min and max round nothing): a parent's volume from its children.
  void merge(const Kdop18f& other) { merge(*this, other); }
  // Becomes the union of a and b.
  void merge(const Kdop18f& a, const Kdop18f& b) {
#if defined(__SSE2__)
    for (int k = 0; k < kLanes; k += 4) {
      _mm_store_ps(&min[k], _mm_min_ps(_mm_load_ps(&a.min[k]), _mm_load_ps(&b.min[k])));
      _mm_store_ps(&max[k], _mm_max_ps(_mm_load_ps(&a.max[k]), _mm_load_ps(&b.max[k])));
    }
#else
    for (int k = 0; k < kLanes; ++k) {
      min[k] = std::min(a.min[k], b.min[k]);
      max[k] = std::max(a.max[k], b.max[k]);
    }
#endif
  }
};

// A float at or below x (float_below) or at or above it (float_above), for volumes rounded
// outwards: widened by 2^-22 of the value (more than half a float's spacing, the most that
// rounding to the nearest float moves it) and by a tiny absolute amount (values near zero),
// before that rounding. Clamped to the finite floats, so that a huge bound does not round to an
// infinity on the wrong side (+infinity, an empty minimum, gives the largest float). Plain
// arithmetic: it vectorises.
namespace float_rounding {
inline constexpr double kRelative = 0x1p-22;
inline constexpr double kAbsolute = 1e-30;
inline constexpr double kFloatMax = std::numeric_limits<float>::max();
}  // namespace float_rounding
inline float float_below(double x) {
  using namespace float_rounding;
  return static_cast<float>(
      std::min(x * (x > 0 ? 1 - kRelative : 1 + kRelative) - kAbsolute, kFloatMax));
}
inline float float_above(double x) {
  using namespace float_rounding;
  return static_cast<float>(
      std::max(x * (x > 0 ? 1 + kRelative : 1 - kRelative) + kAbsolute, -kFloatMax));
}

inline std::array<double, Kdop18::kAxes> Kdop18::project(const Vec3& p) {
  constexpr double kInvSqrt2 = 0.70710678118654752440;
  const double x = p.x(), y = p.y(), z = p.z();
  return {x,
          y,
          z,
          (x + y) * kInvSqrt2,
          (x - y) * kInvSqrt2,
          (x + z) * kInvSqrt2,
          (x - z) * kInvSqrt2,
          (y + z) * kInvSqrt2,
          (y - z) * kInvSqrt2};
}

inline void Kdop18::add(const Vec3& p) {
  const auto d = project(p);
  grow(d, d);
}

// The refit's inner loop: two axes per instruction (compilers keep std::min's branches here).
// Bounds are never NaN (positions are finite), so minpd's NaN rule does not matter.
inline void Kdop18::grow(const std::array<double, kAxes>& low,
                         const std::array<double, kAxes>& high) {
#if defined(__SSE2__)
  for (int k = 0; k + 1 < kAxes; k += 2) {
    _mm_storeu_pd(&min[k], _mm_min_pd(_mm_loadu_pd(&min[k]), _mm_loadu_pd(&low[k])));
    _mm_storeu_pd(&max[k], _mm_max_pd(_mm_loadu_pd(&max[k]), _mm_loadu_pd(&high[k])));
  }
  constexpr int kLast = kAxes - 1;
  min[kLast] = low[kLast] < min[kLast] ? low[kLast] : min[kLast];
  max[kLast] = high[kLast] > max[kLast] ? high[kLast] : max[kLast];
#else
  for (int k = 0; k < kAxes; ++k) {
    min[k] = std::min(min[k], low[k]);
    max[k] = std::max(max[k], high[k]);
  }
#endif
}

inline bool Kdop18::overlaps(const Kdop18& other) const {
#if defined(__SSE2__)
  // The traversal's inner test: two axes per comparison (compilers do not vectorise the loop
  // below on their own), the same ordered comparisons.
  __m128d separated = _mm_setzero_pd();
  for (int k = 0; k + 1 < kAxes; k += 2) {
    separated =
        _mm_or_pd(separated, _mm_cmpgt_pd(_mm_loadu_pd(&min[k]), _mm_loadu_pd(&other.max[k])));
    separated =
        _mm_or_pd(separated, _mm_cmpgt_pd(_mm_loadu_pd(&other.min[k]), _mm_loadu_pd(&max[k])));
  }
  constexpr int kLast = kAxes - 1;
  return _mm_movemask_pd(separated) == 0 && !(min[kLast] > other.max[kLast]) &&
         !(other.min[kLast] > max[kLast]);
#else
  // Non-short-circuit accumulation: the 9 comparisons vectorise better than early exits.
  bool separated = false;
  for (int k = 0; k < kAxes; ++k) {
    separated |= (min[k] > other.max[k]) | (other.min[k] > max[k]);
  }
  return !separated;
#endif
}

inline bool Kdop18f::overlaps(const Kdop18f& other) const {
#if defined(__SSE2__)
  __m128 separated = _mm_setzero_ps();
  for (int k = 0; k < kLanes; k += 4) {
    separated =
        _mm_or_ps(separated, _mm_cmpgt_ps(_mm_load_ps(&min[k]), _mm_load_ps(&other.max[k])));
    separated =
        _mm_or_ps(separated, _mm_cmpgt_ps(_mm_load_ps(&other.min[k]), _mm_load_ps(&max[k])));
  }
  return _mm_movemask_ps(separated) == 0;
#else
  bool separated = false;
  for (int k = 0; k < kLanes; ++k) {
    separated |= (min[k] > other.max[k]) | (other.min[k] > max[k]);
  }
  return !separated;
#endif
}

}  // namespace untangle

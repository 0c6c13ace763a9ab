// The narrow phase's cheap filters, in the order they run: the SSE box test of two leaves' four
// triangle pairs, shared vertices, the quick ball side test and the exact corner side test.
#pragma once
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <array>

#include "frames.hpp"

namespace untangle::narrow {

inline bool share_vertex(const std::array<Index, 3>& a, const std::array<Index, 3>& b) {
#if defined(__SSE2__)
  // a's corners (the last twice) against each of b's, four lanes at a time.
  const __m128i corners = _mm_setr_epi32(static_cast<int>(a[0]), static_cast<int>(a[1]),
                                         static_cast<int>(a[2]), static_cast<int>(a[2]));
  const __m128i equal =
      _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi32(corners, _mm_set1_epi32(static_cast<int>(b[0]))),
                                _mm_cmpeq_epi32(corners, _mm_set1_epi32(static_cast<int>(b[1])))),
                   _mm_cmpeq_epi32(corners, _mm_set1_epi32(static_cast<int>(b[2]))));
  return _mm_movemask_epi8(equal) != 0;
#else
  for (Index u : a) {
    if (u == b[0] || u == b[1] || u == b[2]) return true;
  }
  return false;
#endif
}

// Some corner of leaf a is one of leaf b's. Else no triangle of a shares a vertex with one of b.
inline bool leaves_share_corner(const std::array<Index, 4>& a, const std::array<Index, 4>& b) {
#if defined(__SSE2__)
  const __m128i corners = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a.data()));
  __m128i equal = _mm_setzero_si128();
  for (Index v : b) {
    equal = _mm_or_si128(equal, _mm_cmpeq_epi32(corners, _mm_set1_epi32(static_cast<int>(v))));
  }
  return _mm_movemask_epi8(equal) != 0;
#else
  for (Index u : a) {
    if (u == b[0] || u == b[1] || u == b[2] || u == b[3]) return true;
  }
  return false;
#endif
}

// Bit 2 i + j is set when the boxes of triangle i of leaf a and triangle j of leaf b overlap.
// Boxes apart by more than a hit's tolerance reach: no edge of one can meet the other, not even
// as a dropped hit (those lie within kHitTolerance of the triangle, relative to its size).
inline unsigned overlap_mask(const LeafBoxes& a, const LeafBoxes& b) {
#if defined(__SSE2__)
  // Lane 2 i + j compares triangle i of a with triangle j of b.
  __m128 separated = _mm_setzero_ps();
  for (int k = 0; k < 3; ++k) {
    const __m128 va = _mm_load_ps(a.axis[k].data());
    const __m128 vb = _mm_load_ps(b.axis[k].data());
    const __m128 a_low = _mm_shuffle_ps(va, va, _MM_SHUFFLE(1, 1, 0, 0));
    const __m128 a_high = _mm_shuffle_ps(va, va, _MM_SHUFFLE(3, 3, 2, 2));
    const __m128 b_low = _mm_shuffle_ps(vb, vb, _MM_SHUFFLE(1, 0, 1, 0));
    const __m128 b_high = _mm_shuffle_ps(vb, vb, _MM_SHUFFLE(3, 2, 3, 2));
    separated =
        _mm_or_ps(separated, _mm_or_ps(_mm_cmpgt_ps(a_low, b_high), _mm_cmpgt_ps(b_low, a_high)));
  }
  return ~static_cast<unsigned>(_mm_movemask_ps(separated)) & 0xFu;
#else
  unsigned mask = 0;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2; ++j) {
      bool separated = false;
      for (const int k : {0, 1, 2}) {
        separated |= a.axis[k][i] > b.axis[k][j + 2] || b.axis[k][j] > a.axis[k][i + 2];
      }
      if (!separated) mask |= 1u << (2 * i + j);
    }
  }
  return mask;
#endif
}

// The quick side test: the ball around `other` clearly on one side of the plane of `plane`, so
// every corner is too, by more than corner_sides' margin (it would say all_on_one_side).
inline bool ball_on_one_side(const TriangleFrame& plane, const TriangleFrame& other) {
  const double distance = std::abs(plane.unit_normal.dot(other.centre - plane.corners[0]));
  return distance - other.radius > plane.ball_margin + other.ball_margin;
}

struct CornerSides {
  std::array<int, 3> side;
  std::array<double, 3> distance;  // plane.normal . (corner - plane's corner 0)
};

// The corners of `other` seen from the plane of `plane` (through its corner 0): +1 or -1 for a
// corner clearly on that side, by a margin far above rounding and far beyond kHitTolerance's
// reach, else 0. An edge with both ends clearly on one side cannot cross the plane, not even as
// a dropped hit; a triangle with its three corners there cannot either.
inline CornerSides corner_sides(const TriangleFrame& plane, const TriangleFrame& other) {
  const Vec3& origin = plane.corners[0];
  CornerSides out;
  double reach2 = 0;
  for (int i = 0; i < 3; ++i) {
    const Vec3 r = other.corners[i] - origin;
    out.distance[i] = plane.normal.dot(r);
    reach2 = std::max(reach2, r.squaredNorm());
  }
  const double margin2 = plane.side_tolerance * reach2;
  for (int i = 0; i < 3; ++i) {
    const double d = out.distance[i];
    out.side[i] = d * d > margin2 ? (d > 0 ? 1 : -1) : 0;
  }
  return out;
}

inline bool all_on_one_side(const std::array<int, 3>& sides) {
  return sides[0] != 0 && sides[0] == sides[1] && sides[0] == sides[2];
}

inline bool all_clearly_placed(const std::array<int, 3>& sides) {
  return sides[0] != 0 && sides[1] != 0 && sides[2] != 0;
}

}  // namespace untangle::narrow

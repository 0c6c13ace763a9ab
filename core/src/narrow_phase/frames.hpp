// What the narrow phase computes once per leaf and triangle each frame: the leaf's triangle boxes
// for the SSE box test, and one record per triangle for the side, interval and edge tests.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "untangle/kdop.hpp"
#include "untangle/mesh.hpp"

namespace untangle::narrow {

// A triangle plane is "clearly apart" from the other triangle when every corner of the other
// lies on one side by more than this fraction of their distance from the plane's origin corner.
// Far above rounding, far below kHitTolerance's reach, so it only skips pairs with no hit.
constexpr double kSeparationTolerance = 1e-8;
// Relative margin of the box test: far above kHitTolerance, so it never rejects a (dropped) hit.
constexpr double kBoxMargin = 1e-6;
// Margin of the quick side test, relative to the two boxes' largest extents. Points of two
// boxes that pass the box test are within sqrt(3) times that sum of each other, so this is more
// than five times the margin of the exact side test (kSeparationTolerance times the largest
// distance from the plane's origin corner).
constexpr double kBallMargin = 1e-7;

// What the box test reads of a leaf this frame: per axis, the boxes of its (up to) two
// triangles as (low 0, low 1, high 0, high 1), grown by kBoxMargin times their largest extent
// and rounded outwards to floats. A missing or undetectable triangle has an empty box (low the
// largest float, high the lowest), which overlaps nothing. Most candidate pairs end at this
// test, which runs the four triangle pairs of a leaf pair at once.
// Constructs without arguments by default-initialisation (no zeroing): a per-leaf or
// per-triangle list that a parallel loop fills is then first touched by that loop, once, and not
// by a serial memset before it. Entries the loop skips are never read.
template <class T>
struct DefaultInitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  DefaultInitAllocator() noexcept = default;
  template <class U>
  DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

struct alignas(16) LeafBoxes {
  std::array<std::array<float, 4>, 3> axis;
};

// What the later tests read of a triangle this frame, computed once per triangle and packed in
// one record, in the order the tests use it, so that a candidate pair reads two records instead
// of five scattered arrays.
struct TriangleFrame {
  // The quick side test: a ball around the corners, the unit normal (zero without area).
  Vec3 centre, unit_normal;
  double radius;
  double ball_margin;  // kBallMargin times the box's largest extent
  // The exact side test and Moller-Trumbore.
  std::array<Vec3, 3> corners;
  Vec3 normal;            // (b - a) x (c - a), unnormalised
  double side_tolerance;  // kSeparationTolerance^2 |normal|^2, the margin of the side test
};

// Asks for the cache lines of `frame` (a hint: it never faults).
inline void prefetch(const TriangleFrame& frame) {
  const char* bytes = reinterpret_cast<const char*>(&frame);
  for (std::size_t offset = 0; offset < sizeof(TriangleFrame); offset += 64) {
    __builtin_prefetch(bytes + offset);
  }
  __builtin_prefetch(bytes + sizeof(TriangleFrame) - 1);
}

using LeafBoxList = std::vector<LeafBoxes, DefaultInitAllocator<LeafBoxes>>;
using TriangleFrames = std::vector<TriangleFrame, DefaultInitAllocator<TriangleFrame>>;

// Fills f and lane `lane` of the leaf's boxes for triangle t.
inline void triangle_frame(const ClothMesh& mesh, const Positions& x, Index t, int lane,
                           LeafBoxes& boxes, TriangleFrame& f) {
  const auto& v = mesh.triangles[t];
  const Vec3 &a = x[v[0]], &b = x[v[1]], &c = x[v[2]];
  f.corners = {a, b, c};
  f.normal = (b - a).cross(c - a);
  const Vec3 low = a.cwiseMin(b).cwiseMin(c);
  const Vec3 high = a.cwiseMax(b).cwiseMax(c);
  const double extent = (high - low).maxCoeff();
  for (int k = 0; k < 3; ++k) {
    boxes.axis[k][lane] = float_below(low[k] - kBoxMargin * extent);
    boxes.axis[k][lane + 2] = float_above(high[k] + kBoxMargin * extent);
  }
  f.side_tolerance = kSeparationTolerance * kSeparationTolerance * f.normal.squaredNorm();
  f.centre = (a + b + c) / 3;
  const double normal_length = f.normal.norm();
  f.unit_normal = normal_length > 0 ? Vec3(f.normal / normal_length) : Vec3::Zero();
  f.radius = std::sqrt(std::max(
      {(a - f.centre).squaredNorm(), (b - f.centre).squaredNorm(), (c - f.centre).squaredNorm()}));
  f.ball_margin = kBallMargin * extent;
}

inline void leaf_frames(const ClothMesh& mesh, const Positions& x, Index l, LeafBoxes& boxes,
                        TriangleFrames& frames) {
  for (int lane = 0; lane < 2; ++lane) {
    const Index t = mesh.leaves[l][lane];
    if (t != kNoIndex && mesh.triangle_detectable[t]) {
      triangle_frame(mesh, x, t, lane, boxes, frames[t]);
    } else {
      for (auto& axis : boxes.axis) {
        axis[lane] = std::numeric_limits<float>::max();
        axis[lane + 2] = std::numeric_limits<float>::lowest();
      }
    }
  }
}

}  // namespace untangle::narrow

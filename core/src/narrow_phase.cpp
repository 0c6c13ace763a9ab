#include "untangle/narrow_phase.hpp"

#include <omp.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

#include "parallel_errors.hpp"

namespace untangle {

namespace {

// Candidate leaf pairs per parallel block. A constant, so the blocks (and the order in which
// their outputs are concatenated) do not depend on the thread count.
constexpr std::size_t kBlockSize = 256;

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

// The interval test runs only where the planes meet at a sine above this: the direction of their
// shared line is then known to about 1e-16 / kMinCrossingSine.
constexpr double kMinCrossingSine = 1e-4;
// The interval test's margin, in multiples of the two ball margins (kBallMargin times the
// extents): far above the rounding of the crossing points, so it never rejects a pair with a hit.
constexpr double kIntervalMargin = 10;

// bucket_sort takes std::sort below one item per this many buckets.
constexpr std::size_t kFewItemsPerBucket = 8;

std::uint64_t hit_key(Index edge, Index triangle) {
  return (static_cast<std::uint64_t>(edge) << 32) | triangle;
}

// Where an edge crosses a triangle: the edge parameter and two barycentrics.
struct EdgeCrossing {
  double t, u, v;
};

// A hit as a block keeps it: the point and the third barycentric follow when the hit is written
// out, by the expressions Moller-Trumbore uses (the same bits), so a third of the memory moves.
struct RawHit {
  std::uint64_t key;
  EdgeCrossing crossing;
};

// The Hit of edge p0 -> p1 (its lower vertex first) crossing a triangle at `c`.
Hit make_hit(const Vec3& p0, const Vec3& p1, Index edge, Index triangle, const EdgeCrossing& c) {
  Hit hit;
  hit.edge = edge;
  hit.triangle = triangle;
  hit.t = c.t;
  const Vec3 dir = p1 - p0;
  hit.point = p0 + c.t * dir;
  const double w = 1 - c.u - c.v;
  hit.barycentric = Vec3(w, c.u, c.v);
  return hit;
}

struct PairRecord {
  Index a, b;
  std::uint32_t first;  // raw hits of this pair: [first, first + count)
  std::uint32_t count;
};

struct Block {
  std::vector<std::array<Index, 2>> candidates;  // triangle pairs for the exact tests
  std::vector<PairRecord> pairs;
  std::vector<RawHit> hits;
  std::vector<std::uint64_t> dropped;
};

// What the box test reads of a leaf this frame: per axis, the boxes of its (up to) two
// triangles as (low 0, low 1, high 0, high 1), grown by kBoxMargin times their largest extent
// and rounded outwards to floats. A missing or undetectable triangle has an empty box (low the
// largest float, high the lowest), which overlaps nothing. Most candidate pairs end at this
// test, which runs the four triangle pairs of a leaf pair at once.
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

// Fills f and lane `lane` of the leaf's boxes for triangle t.
void triangle_frame(const ClothMesh& mesh, const Positions& x, Index t, int lane, LeafBoxes& boxes,
                    TriangleFrame& f) {
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

// Sorted by (bucket, then `less` within a bucket) with a counting sort over the buckets: linear
// for keys whose first part is a dense index (an edge, a triangle) and buckets of a few items.
// Each thread sorts the items of its own range of buckets (every thread reads all items, but
// writes only its own), so no write is shared and the result is that of one thread.
// Items much fewer than buckets (a clean or nearly clean state, as in most of a bake's checks)
// are sorted by one std::sort instead: the passes over all buckets would cost more. The order is
// the same, as no two items compare equal (a hit reference is unique by its block and index, a
// pair record by its triangles: each triangle pair belongs to one leaf pair).
// `sorted` and `begin` are the caller's, kept between calls.
template <class T, class BucketOf, class Less>
void bucket_sort(const std::vector<T>& items, std::size_t bucket_count, BucketOf bucket_of,
                 Less less, std::vector<T>& sorted, std::vector<std::uint32_t>& begin) {
  if (items.size() < bucket_count / kFewItemsPerBucket) {
    sorted.assign(items.begin(), items.end());
    std::sort(sorted.begin(), sorted.end(), [&](const T& x, const T& y) {
      const std::size_t bx = bucket_of(x), by = bucket_of(y);
      return bx < by || (bx == by && less(x, y));
    });
    return;
  }
  sorted.resize(items.size());
  begin.assign(bucket_count + 1, 0);
  std::vector<std::uint32_t> range_size(static_cast<std::size_t>(omp_get_max_threads()), 0);
  ParallelErrors errors;
#pragma omp parallel
  {
    const auto threads = static_cast<std::size_t>(omp_get_num_threads());
    const auto thread = static_cast<std::size_t>(omp_get_thread_num());
    const std::size_t low = bucket_count * thread / threads;
    const std::size_t high = bucket_count * (thread + 1) / threads;
    for (const T& item : items) {
      const std::size_t b = bucket_of(item);
      if (b >= low && b < high) ++begin[b + 1];
    }
    std::uint32_t sum = 0;  // the range's own prefix sums, then shifted by the ranges before
    for (std::size_t b = low; b < high; ++b) {
      sum += begin[b + 1];
      begin[b + 1] = sum;
    }
    range_size[thread] = sum;
#pragma omp barrier
    std::uint32_t shift = 0;
    for (std::size_t r = 0; r < thread; ++r) shift += range_size[r];
    for (std::size_t b = low; b < high; ++b) begin[b + 1] += shift;
#pragma omp barrier
    errors.run([&] {  // after the last barrier: a thread that fails may leave at once
      std::vector<std::uint32_t> fill(begin.begin() + low, begin.begin() + high);
      for (const T& item : items) {
        const std::size_t b = bucket_of(item);
        if (b >= low && b < high) sorted[fill[b - low]++] = item;
      }
      for (std::size_t b = low; b < high; ++b) {
        if (begin[b + 1] - begin[b] > 1) {
          std::sort(sorted.begin() + begin[b], sorted.begin() + begin[b + 1], less);
        }
      }
    });
  }
  errors.rethrow();
}

bool share_vertex(const std::array<Index, 3>& a, const std::array<Index, 3>& b) {
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
bool leaves_share_corner(const std::array<Index, 4>& a, const std::array<Index, 4>& b) {
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

void leaf_frames(const ClothMesh& mesh, const Positions& x, Index l, LeafBoxes& boxes,
                 std::vector<TriangleFrame>& frames) {
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

// Bit 2 i + j is set when the boxes of triangle i of leaf a and triangle j of leaf b overlap.
// Boxes apart by more than a hit's tolerance reach: no edge of one can meet the other, not even
// as a dropped hit (those lie within kHitTolerance of the triangle, relative to its size).
unsigned overlap_mask(const LeafBoxes& a, const LeafBoxes& b) {
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
bool ball_on_one_side(const TriangleFrame& plane, const TriangleFrame& other) {
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
CornerSides corner_sides(const TriangleFrame& plane, const TriangleFrame& other) {
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

bool all_on_one_side(const std::array<int, 3>& sides) {
  return sides[0] != 0 && sides[0] == sides[1] && sides[0] == sides[2];
}

bool all_clearly_placed(const std::array<int, 3>& sides) {
  return sides[0] != 0 && sides[1] != 0 && sides[2] != 0;
}

// Where `t` meets the other triangle's plane, projected on `axis` (along the line both planes
// share), relative to `origin`: the two points where its edges from the lone corner cross it,
// and their interval widened by the reach of the hit tolerance. Every corner of t is clearly on
// a side, and not all on the same one.
struct Crossings {
  std::array<double, 2> at;      // where the edges cross
  std::array<unsigned, 2> edge;  // their slots in the triangle (edge k joins corners k, k + 1)
  std::array<double, 2> reach;   // the widened interval, low and high
};

Crossings crossings(const TriangleFrame& t, const CornerSides& s, const Vec3& axis,
                    const Vec3& origin) {
  const int k = s.side[0] == s.side[1] ? 2 : (s.side[0] == s.side[2] ? 1 : 0);
  const int m1 = k == 2 ? 0 : k + 1;
  const int m2 = k == 0 ? 2 : k - 1;
  const double pk = axis.dot(t.corners[k] - origin);
  const double p1 = axis.dot(t.corners[m1] - origin);
  const double p2 = axis.dot(t.corners[m2] - origin);
  const double r1 = s.distance[k] / (s.distance[k] - s.distance[m1]);  // along edge k -> m1
  const double r2 = s.distance[k] / (s.distance[k] - s.distance[m2]);
  const double c1 = pk + (p1 - pk) * r1;
  const double c2 = pk + (p2 - pk) * r2;
  // An edge of the other triangle is still a (dropped) hit up to kHitTolerance outside t in
  // barycentric terms. Along the line, m2's coordinate grows from 0 at c1 to r2 at c2: that
  // reach is kHitTolerance |c2 - c1| / r2 beyond c1, long where the line passes close to
  // corner k (and likewise beyond c2).
  const double length = std::abs(c2 - c1);
  const double beyond_c1 = kHitTolerance * length / r2;
  const double beyond_c2 = kHitTolerance * length / r1;
  Crossings out;
  out.at = {c1, c2};
  out.edge = {static_cast<unsigned>(k), static_cast<unsigned>(m2)};
  out.reach = c1 <= c2 ? std::array<double, 2>{c1 - beyond_c1, c2 + beyond_c2}
                       : std::array<double, 2>{c2 - beyond_c2, c1 + beyond_c1};
  return out;
}

// Which edges of each triangle may meet the other (bit k: edge k), by Moller's interval test:
// where both triangles cross the other's plane, an edge of one meets the other only where its
// crossing lies in the other's interval along the line both planes share. On dense tangles most
// candidate pairs do intersect; this leaves the exact test to the two edges that hit instead of
// the four that cross a plane. All edges where the test does not apply.
std::array<unsigned, 2> edges_to_test(const TriangleFrame& fa, const CornerSides& a_sides,
                                      const TriangleFrame& fb, const CornerSides& b_sides) {
  constexpr std::array<unsigned, 2> kAll = {7u, 7u};
  if (!all_clearly_placed(a_sides.side) || !all_clearly_placed(b_sides.side)) return kAll;
  const Vec3 axis = fa.normal.cross(fb.normal);
  const double axis2 = axis.squaredNorm();
  // Nearly parallel planes: their shared line is ill-defined, leave them to the edge tests.
  if (!(axis2 >
        kMinCrossingSine * kMinCrossingSine * fa.normal.squaredNorm() * fb.normal.squaredNorm())) {
    return kAll;
  }
  const Vec3& origin = fb.corners[0];
  const Crossings ca = crossings(fa, a_sides, axis, origin);
  const Crossings cb = crossings(fb, b_sides, axis, origin);
  const double margin = kIntervalMargin * std::sqrt(axis2) * (fa.ball_margin + fb.ball_margin);
  auto inside = [margin](double at, const std::array<double, 2>& reach) {
    return at >= reach[0] - margin && at <= reach[1] + margin;
  };
  std::array<unsigned, 2> mask = {0u, 0u};
  for (int i = 0; i < 2; ++i) {
    if (inside(ca.at[i], cb.reach)) mask[0] |= 1u << ca.edge[i];
    if (inside(cb.at[i], ca.reach)) mask[1] |= 1u << cb.edge[i];
  }
  return mask;
}

// intersect_edge_triangle with |(b - a) x (c - a)|^2 given: the narrow phase has it per triangle
// and frame (the same expression, so the same bits).
EdgeTriangleResult moller_trumbore(const Vec3& p0, const Vec3& p1, const Vec3& a, const Vec3& b,
                                   const Vec3& c, double normal_squared, EdgeCrossing& hit) {
  const Vec3 dir = p1 - p0;
  const Vec3 e1 = b - a;
  const Vec3 e2 = c - a;
  const Vec3 pvec = dir.cross(e2);
  const double det = e1.dot(pvec);
  // det = dir . (e1 x e2): compare with |dir| |e1 x e2| for the sine of the edge-plane angle.
  const double plane_scale = dir.squaredNorm() * normal_squared;
  if (!(det * det > kParallelTolerance * kParallelTolerance * plane_scale)) {
    return EdgeTriangleResult::kNone;
  }
  const double inv_det = 1.0 / det;
  const Vec3 s = p0 - a;
  const double u = s.dot(pvec) * inv_det;
  if (u < -kHitTolerance || u > 1 + kHitTolerance) return EdgeTriangleResult::kNone;
  const Vec3 q = s.cross(e1);
  const double v = dir.dot(q) * inv_det;
  if (v < -kHitTolerance || u + v > 1 + kHitTolerance) return EdgeTriangleResult::kNone;
  const double t = e2.dot(q) * inv_det;
  if (t < -kHitTolerance || t > 1 + kHitTolerance) return EdgeTriangleResult::kNone;
  const double w = 1 - u - v;
  if (u <= kHitTolerance || v <= kHitTolerance || w <= kHitTolerance || t <= kHitTolerance ||
      t >= 1 - kHitTolerance) {
    return EdgeTriangleResult::kDropped;
  }
  hit = {t, u, v};
  return EdgeTriangleResult::kHit;
}

// The three edges of `owner` (ClothMesh::triangle_edges[owner_index]) against `target`, but for
// those with both ends clearly on one side of the target's plane (`sides`, from corner_sides).
void edges_against(const ClothMesh& mesh, Index owner_index, const TriangleFrame& owner,
                   const std::array<Index, 3>& owner_vertices, const std::array<int, 3>& sides,
                   unsigned edges, Index target_index, const TriangleFrame& target, Block& block) {
  const auto& pt = target.corners;
  const double normal_squared = target.normal.squaredNorm();
  // Unrolled: the loop's index arithmetic ((k + 1) % 3, the corner swap) then folds away.
#pragma GCC unroll 3
  for (int k = 0; k < 3; ++k) {
    // Edge k joins corners k and k + 1; its canonical order (lower vertex first) makes the
    // result bit-identical whichever of its triangles it is tested from.
    int i = k, j = (k + 1) % 3;
    if ((edges & (1u << k)) == 0 || (sides[i] != 0 && sides[i] == sides[j])) continue;
    if (owner_vertices[i] > owner_vertices[j]) std::swap(i, j);
    EdgeCrossing hit;
    const EdgeTriangleResult r = moller_trumbore(owner.corners[i], owner.corners[j], pt[0], pt[1],
                                                 pt[2], normal_squared, hit);
    if (r == EdgeTriangleResult::kNone) continue;
    const Index e = mesh.triangle_edges[owner_index][k];
    if (r == EdgeTriangleResult::kHit) {
      block.hits.push_back({hit_key(e, target_index), hit});
    } else {
      block.dropped.push_back(hit_key(e, target_index));
    }
  }
}

void test_triangle_pair(const ClothMesh& mesh, const std::vector<TriangleFrame>& frames, Index ta,
                        Index tb, Block& block) {
  const TriangleFrame& fa = frames[ta];
  const TriangleFrame& fb = frames[tb];
  if (ball_on_one_side(fb, fa) || ball_on_one_side(fa, fb)) return;
  // Both directions are needed: a side test of A against B's plane says nothing about the
  // edges of B once A reaches that plane.
  const CornerSides a_sides = corner_sides(fb, fa);
  if (all_on_one_side(a_sides.side)) return;
  const CornerSides b_sides = corner_sides(fa, fb);
  if (all_on_one_side(b_sides.side)) return;
  const std::array<unsigned, 2> edges = edges_to_test(fa, a_sides, fb, b_sides);
  if ((edges[0] | edges[1]) == 0) return;
  const std::uint32_t first = static_cast<std::uint32_t>(block.hits.size());
  edges_against(mesh, ta, fa, mesh.triangles[ta], a_sides.side, edges[0], tb, fb, block);
  edges_against(mesh, tb, fb, mesh.triangles[tb], b_sides.side, edges[1], ta, fa, block);
  const auto count = static_cast<std::uint32_t>(block.hits.size()) - first;
  if (count > 0) block.pairs.push_back({std::min(ta, tb), std::max(ta, tb), first, count});
}

// The candidate triangle pairs of leaf pairs [bi kBlockSize, (bi + 1) kBlockSize) and their
// exact tests, into `block`. Out of line: inlined into the caller's error-catching lambda, its
// loops came out 2 % slower (GCC 12).
[[gnu::noinline]] void test_block(const ClothMesh& mesh, const Bvh& bvh,
                                  const std::vector<LeafBoxes>& boxes,
                                  const std::vector<TriangleFrame>& frames,
                                  const std::vector<LeafPair>& leaf_pairs, std::size_t bi,
                                  Block& block) {
  block.pairs.clear();
  block.hits.clear();
  block.dropped.clear();
  block.candidates.clear();
  // The cheap tests over the whole block first, then the exact ones: two tight loops instead
  // of one that mixes them (and reloads the mesh's arrays after every stored hit).
  const Leaf* leaves = mesh.leaves.data();
  const std::array<Index, 3>* triangles = mesh.triangles.data();
  const std::size_t end = std::min(leaf_pairs.size(), (bi + 1) * kBlockSize);
  for (std::size_t i = bi * kBlockSize; i < end; ++i) {
    const auto [a, b] = leaf_pairs[i];
    unsigned mask = overlap_mask(boxes[a], boxes[b]);
    if (mask == 0) continue;
    // Most leaf pairs are not neighbours: one test of their corners spares a vertex test per
    // triangle pair.
    const bool neighbours = leaves_share_corner(bvh.leaf_corners(a), bvh.leaf_corners(b));
    // In the order (triangle 0 of a, 0 of b), (0, 1), (1, 0), (1, 1).
    for (; mask != 0; mask &= mask - 1) {
      const int bit = std::countr_zero(mask);
      const Index ta = leaves[a][bit >> 1];
      const Index tb = leaves[b][bit & 1];
      // Triangles that share a vertex have it in both boxes: the cheaper box test first.
      if (!neighbours || !share_vertex(triangles[ta], triangles[tb])) {
        block.candidates.push_back({ta, tb});
      }
    }
  }
  for (const auto& [ta, tb] : block.candidates) test_triangle_pair(mesh, frames, ta, tb, block);
}

struct HitRef {
  std::uint64_t key;
  std::uint32_t block, index;  // blocks[block].hits[index]
};

}  // namespace

struct NarrowPhaseBuffers::Storage {
  Candidates candidates;
  CandidateBuffers candidate_buffers;
  std::vector<LeafBoxes> boxes;           // per leaf
  std::vector<std::uint8_t> used_leaves;  // per leaf: in a candidate pair
  std::vector<TriangleFrame> frames;
  std::vector<Block> blocks;  // cleared, not freed, between calls
  // The gather's lists: every entry up to their size is written each call.
  std::vector<std::uint32_t> hit_offset, pair_offset, dropped_offset;
  std::vector<HitRef> refs, order;
  std::vector<PairRecord> records, sorted_records;
  std::vector<std::uint64_t> dropped;
  std::vector<Index> rank, kept;
  std::vector<std::uint8_t> is_segment;
  std::vector<std::array<Index, 2>> segment_hits;
  std::vector<std::uint32_t> bucket_begin;
};

NarrowPhaseBuffers::NarrowPhaseBuffers() : storage(std::make_unique<Storage>()) {}
NarrowPhaseBuffers::~NarrowPhaseBuffers() = default;
NarrowPhaseBuffers::NarrowPhaseBuffers(NarrowPhaseBuffers&&) noexcept = default;
NarrowPhaseBuffers& NarrowPhaseBuffers::operator=(NarrowPhaseBuffers&&) noexcept = default;

EdgeTriangleResult intersect_edge_triangle(const Vec3& p0, const Vec3& p1, const Vec3& a,
                                           const Vec3& b, const Vec3& c, Hit& hit) {
  EdgeCrossing crossing;
  const EdgeTriangleResult r =
      moller_trumbore(p0, p1, a, b, c, (b - a).cross(c - a).squaredNorm(), crossing);
  if (r == EdgeTriangleResult::kHit) {
    const Hit full = make_hit(p0, p1, hit.edge, hit.triangle, crossing);
    hit.t = full.t;
    hit.point = full.point;
    hit.barycentric = full.barycentric;
  }
  return r;
}

Intersections find_intersections(const ClothMesh& mesh, const Bvh& bvh, const Positions& positions,
                                 const DetectOptions& options, NarrowPhaseBuffers* buffers) {
  Intersections out;
  find_intersections(mesh, bvh, positions, options, buffers, out);
  return out;
}

void find_intersections(const ClothMesh& mesh, const Bvh& bvh, const Positions& positions,
                        const DetectOptions& options, NarrowPhaseBuffers* buffers,
                        Intersections& out) {
  if (positions.size() != mesh.vertex_count()) {
    throw std::invalid_argument("find_intersections: " + std::to_string(positions.size()) +
                                " positions given for a mesh of " +
                                std::to_string(mesh.vertex_count()) + " vertices");
  }
  if (&bvh.mesh() != &mesh) {
    throw std::invalid_argument("find_intersections: the BVH was built for another mesh");
  }
  NarrowPhaseBuffers own_buffers;
  NarrowPhaseBuffers::Storage& storage = *(buffers != nullptr ? buffers : &own_buffers)->storage;
  out.dropped_hits = 0;
  out.candidate_pairs = 0;
  const double t0 = omp_get_wtime();
  Candidates& candidates = storage.candidates;
  bvh.find_candidates(options.cull, candidates, storage.candidate_buffers);
  const double t1 = omp_get_wtime();
  out.broad_seconds = t1 - t0;
  out.culled_nodes = candidates.culled_nodes;

  // Every box and the frame of every detectable triangle are written below: a resize to the
  // same size touches nothing.
  std::vector<LeafBoxes>& boxes = storage.boxes;
  std::vector<TriangleFrame>& frames = storage.frames;
  boxes.resize(mesh.leaves.size());
  frames.resize(mesh.triangles.size());
  const auto leaf_count = static_cast<std::ptrdiff_t>(mesh.leaves.size());
  const auto& leaf_pairs = candidates.leaf_pairs;
  // Only the leaves of a candidate pair are read below. Where those pairs are few (fewer than two
  // per leaf: a state that is clean or nearly, mostly culled, as the untangler's checks are),
  // only their leaves are prepared; marking costs less than the frames it saves.
  const bool few_pairs = leaf_pairs.size() < 2 * mesh.leaves.size();
  std::vector<std::uint8_t>& used = storage.used_leaves;
  if (few_pairs) {
    used.assign(mesh.leaves.size(), 0);
    for (const auto& [a, b] : leaf_pairs) used[a] = used[b] = 1;
  }
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t l = 0; l < leaf_count; ++l) {
    if (!few_pairs || used[l])
      leaf_frames(mesh, positions, static_cast<Index>(l), boxes[l], frames);
  }

  const std::size_t block_count = (leaf_pairs.size() + kBlockSize - 1) / kBlockSize;
  std::vector<Block>& blocks = storage.blocks;
  if (blocks.size() < block_count) blocks.resize(block_count);
  ParallelErrors errors;
#pragma omp parallel for schedule(dynamic, 1)
  for (std::size_t bi = 0; bi < block_count; ++bi) {
    errors.run([&] { test_block(mesh, bvh, boxes, frames, leaf_pairs, bi, blocks[bi]); });
  }
  errors.rethrow();

  // Gather in block order. The hits stay in their blocks: only a 16-byte reference per hit
  // moves through the sort (copying every hit again costs more than the sort on large meshes).
  std::vector<std::uint32_t>& hit_offset = storage.hit_offset;
  std::vector<std::uint32_t>& pair_offset = storage.pair_offset;
  std::vector<std::uint32_t>& dropped_offset = storage.dropped_offset;
  hit_offset.assign(block_count + 1, 0);
  pair_offset.assign(block_count + 1, 0);
  dropped_offset.assign(block_count + 1, 0);
  for (std::size_t bi = 0; bi < block_count; ++bi) {
    hit_offset[bi + 1] = hit_offset[bi] + static_cast<std::uint32_t>(blocks[bi].hits.size());
    pair_offset[bi + 1] = pair_offset[bi] + static_cast<std::uint32_t>(blocks[bi].pairs.size());
    dropped_offset[bi + 1] =
        dropped_offset[bi] + static_cast<std::uint32_t>(blocks[bi].dropped.size());
    out.candidate_pairs += blocks[bi].candidates.size();
  }
  std::vector<HitRef>& refs = storage.refs;
  std::vector<PairRecord>& records = storage.records;
  std::vector<std::uint64_t>& dropped = storage.dropped;
  refs.resize(hit_offset.back());
  records.resize(pair_offset.back());
  dropped.resize(dropped_offset.back());
#pragma omp parallel for schedule(dynamic, 16)
  for (std::size_t bi = 0; bi < block_count; ++bi) {
    const Block& block = blocks[bi];
    for (std::uint32_t k = 0; k < block.hits.size(); ++k) {
      refs[hit_offset[bi] + k] = {block.hits[k].key, static_cast<std::uint32_t>(bi), k};
    }
    std::copy(block.dropped.begin(), block.dropped.end(), dropped.begin() + dropped_offset[bi]);
    for (std::size_t k = 0; k < block.pairs.size(); ++k) {
      PairRecord r = block.pairs[k];
      r.first += hit_offset[bi];  // global raw hit index
      records[pair_offset[bi] + k] = r;
    }
  }
  std::sort(dropped.begin(), dropped.end());
  out.dropped_hits =
      static_cast<std::size_t>(std::unique(dropped.begin(), dropped.end()) - dropped.begin());

  // One hit per (edge, triangle): both copies are bit-identical, so keep the first. Each raw hit
  // learns the index of its kept copy, for the segments below.
  std::vector<HitRef>& order = storage.order;
  bucket_sort(
      refs, mesh.edges.size(), [](const HitRef& r) { return r.key >> 32; },
      [](const HitRef& x, const HitRef& y) {
        return x.key < y.key ||
               (x.key == y.key && (x.block < y.block || (x.block == y.block && x.index < y.index)));
      },
      order, storage.bucket_begin);
  const auto ordered = static_cast<std::ptrdiff_t>(order.size());
  std::vector<Index>& rank = storage.rank;  // 1 + the index of the hit's kept copy
  rank.resize(order.size());
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < ordered; ++i) {
    rank[i] = i == 0 || order[i - 1].key != order[i].key ? 1 : 0;
  }
  std::inclusive_scan(rank.begin(), rank.end(), rank.begin());
  out.hits.resize(rank.empty() ? 0 : rank.back());
  std::vector<Index>& kept = storage.kept;
  kept.resize(refs.size());
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < ordered; ++i) {
    const HitRef& r = order[i];
    if (i == 0 || rank[i - 1] != rank[i]) {
      const auto edge = static_cast<Index>(r.key >> 32);
      const auto& ends = mesh.edges[edge].vertices;
      out.hits[rank[i] - 1] =
          make_hit(positions[ends[0]], positions[ends[1]], edge, static_cast<Index>(r.key),
                   blocks[r.block].hits[r.index].crossing);
    }
    kept[hit_offset[r.block] + r.index] = rank[i] - 1;
  }
  std::vector<PairRecord>& sorted_records = storage.sorted_records;
  bucket_sort(
      records, mesh.triangles.size(), [](const PairRecord& r) { return r.a; },
      [](const PairRecord& x, const PairRecord& y) { return x.b < y.b; }, sorted_records,
      storage.bucket_begin);
  out.pairs.resize(sorted_records.size());
  std::vector<std::uint8_t>& is_segment = storage.is_segment;
  std::vector<std::array<Index, 2>>& segment_hits = storage.segment_hits;
  is_segment.resize(sorted_records.size());
  segment_hits.resize(sorted_records.size());
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < sorted_records.size(); ++i) {
    const PairRecord& r = sorted_records[i];
    out.pairs[i] = {r.a, r.b};
    is_segment[i] = r.count == 2 ? 1 : 0;
    if (r.count != 2) continue;
    std::array<Index, 2> h = {kept[r.first], kept[r.first + 1]};
    if (h[0] > h[1]) std::swap(h[0], h[1]);
    segment_hits[i] = h;
  }
  out.segments.clear();
  out.segments.reserve(sorted_records.size());
  for (std::size_t i = 0; i < sorted_records.size(); ++i) {
    if (is_segment[i]) {
      out.segments.push_back({{sorted_records[i].a, sorted_records[i].b}, segment_hits[i]});
    }
  }
  out.narrow_seconds = omp_get_wtime() - t1;
}

}  // namespace untangle

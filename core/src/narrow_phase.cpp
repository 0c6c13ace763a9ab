#include "untangle/narrow_phase.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

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

std::uint64_t hit_key(Index edge, Index triangle) {
  return (static_cast<std::uint64_t>(edge) << 32) | triangle;
}

struct RawHit {
  std::uint64_t key;
  Hit hit;
};

struct PairRecord {
  Index a, b;
  std::uint32_t first;  // raw hits of this pair: [first, first + count)
  std::uint32_t count;
};

struct Block {
  std::vector<PairRecord> pairs;
  std::vector<RawHit> hits;
  std::vector<std::uint64_t> dropped;
  std::size_t tested = 0;
};

// What the candidate tests read of a triangle this frame, computed once per triangle and packed
// in one record, so that a candidate pair reads two records instead of five scattered arrays.
struct TriangleFrame {
  std::array<Vec3, 3> corners;
  Vec3 normal;  // (b - a) x (c - a), unnormalised
  Vec3 low, high;
  double size;  // the box's largest extent
  std::array<Index, 3> vertices;
  bool detectable;
};

TriangleFrame triangle_frame(const ClothMesh& mesh, const Positions& x, Index t) {
  const auto& v = mesh.triangles[t];
  const Vec3 &a = x[v[0]], &b = x[v[1]], &c = x[v[2]];
  TriangleFrame f{{a, b, c},
                  (b - a).cross(c - a),
                  a.cwiseMin(b).cwiseMin(c),
                  a.cwiseMax(b).cwiseMax(c),
                  0,
                  v,
                  mesh.triangle_detectable[t] != 0};
  f.size = (f.high - f.low).maxCoeff();
  return f;
}

bool share_vertex(const std::array<Index, 3>& a, const std::array<Index, 3>& b) {
  for (Index u : a) {
    if (u == b[0] || u == b[1] || u == b[2]) return true;
  }
  return false;
}

// Boxes apart by more than a hit's tolerance reach: no edge of one can meet the other, not even
// as a dropped hit (those lie within kHitTolerance of the triangle, relative to its size).
bool boxes_apart(const TriangleFrame& p, const TriangleFrame& q) {
  const double reach = kBoxMargin * (p.size + q.size);
  return ((p.low.array() > q.high.array() + reach) || (q.low.array() > p.high.array() + reach))
      .any();
}

// Every corner of `other` strictly on one side of the plane of `plane` (through its corner 0),
// with a margin.
bool clearly_one_side(const TriangleFrame& plane, const TriangleFrame& other) {
  const Vec3& origin = plane.corners[0];
  double d[3];
  double reach2 = 0;
  for (int i = 0; i < 3; ++i) {
    const Vec3 r = other.corners[i] - origin;
    d[i] = plane.normal.dot(r);
    reach2 = std::max(reach2, r.squaredNorm());
  }
  const bool same_sign = (d[0] > 0 && d[1] > 0 && d[2] > 0) || (d[0] < 0 && d[1] < 0 && d[2] < 0);
  if (!same_sign) return false;
  const double closest = std::min({std::abs(d[0]), std::abs(d[1]), std::abs(d[2])});
  return closest * closest >
         kSeparationTolerance * kSeparationTolerance * plane.normal.squaredNorm() * reach2;
}

// The three edges of `owner` (ClothMesh::triangle_edges[owner_index]) against `target`.
void edges_against(const ClothMesh& mesh, Index owner_index, const TriangleFrame& owner,
                   Index target_index, const TriangleFrame& target, Block& block) {
  const auto& pt = target.corners;
  for (int k = 0; k < 3; ++k) {
    // Edge k joins corners k and k + 1; its canonical order (lower vertex first) makes the
    // result bit-identical whichever of its triangles it is tested from.
    int i = k, j = (k + 1) % 3;
    if (owner.vertices[i] > owner.vertices[j]) std::swap(i, j);
    Hit hit;
    const EdgeTriangleResult r =
        intersect_edge_triangle(owner.corners[i], owner.corners[j], pt[0], pt[1], pt[2], hit);
    if (r == EdgeTriangleResult::kNone) continue;
    const Index e = mesh.triangle_edges[owner_index][k];
    if (r == EdgeTriangleResult::kHit) {
      hit.edge = e;
      hit.triangle = target_index;
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
  if (boxes_apart(fa, fb)) return;
  // Both directions are needed: a side test of A against B's plane says nothing about the
  // edges of B once A reaches that plane.
  if (clearly_one_side(fb, fa) || clearly_one_side(fa, fb)) return;
  const std::uint32_t first = static_cast<std::uint32_t>(block.hits.size());
  edges_against(mesh, ta, fa, tb, fb, block);
  edges_against(mesh, tb, fb, ta, fa, block);
  const auto count = static_cast<std::uint32_t>(block.hits.size()) - first;
  if (count > 0) block.pairs.push_back({std::min(ta, tb), std::max(ta, tb), first, count});
}

}  // namespace

EdgeTriangleResult intersect_edge_triangle(const Vec3& p0, const Vec3& p1, const Vec3& a,
                                           const Vec3& b, const Vec3& c, Hit& hit) {
  const Vec3 dir = p1 - p0;
  const Vec3 e1 = b - a;
  const Vec3 e2 = c - a;
  const Vec3 pvec = dir.cross(e2);
  const double det = e1.dot(pvec);
  // det = dir . (e1 x e2): compare with |dir| |e1 x e2| for the sine of the edge-plane angle.
  const double plane_scale = dir.squaredNorm() * e1.cross(e2).squaredNorm();
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
  hit.t = t;
  hit.point = p0 + t * dir;
  hit.barycentric = Vec3(w, u, v);
  return EdgeTriangleResult::kHit;
}

Intersections find_intersections(const ClothMesh& mesh, const Bvh& bvh, const Positions& positions,
                                 const DetectOptions& options) {
  if (positions.size() != mesh.vertex_count()) {
    throw std::invalid_argument("find_intersections: " + std::to_string(positions.size()) +
                                " positions given for a mesh of " +
                                std::to_string(mesh.vertex_count()) + " vertices");
  }
  if (&bvh.mesh() != &mesh) {
    throw std::invalid_argument("find_intersections: the BVH was built for another mesh");
  }
  Intersections out;
  const double t0 = omp_get_wtime();
  Candidates candidates = bvh.find_candidates(options.cull);
  const double t1 = omp_get_wtime();
  out.broad_seconds = t1 - t0;
  out.culled_nodes = std::move(candidates.culled_nodes);

  std::vector<TriangleFrame> frames(mesh.triangles.size());
  const auto triangle_count = static_cast<std::ptrdiff_t>(mesh.triangles.size());
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t t = 0; t < triangle_count; ++t) {
    frames[t] = triangle_frame(mesh, positions, static_cast<Index>(t));
  }

  const auto& leaf_pairs = candidates.leaf_pairs;
  const std::size_t block_count = (leaf_pairs.size() + kBlockSize - 1) / kBlockSize;
  std::vector<Block> blocks(block_count);
#pragma omp parallel for schedule(dynamic, 1)
  for (std::size_t bi = 0; bi < block_count; ++bi) {
    Block& block = blocks[bi];
    const std::size_t end = std::min(leaf_pairs.size(), (bi + 1) * kBlockSize);
    for (std::size_t i = bi * kBlockSize; i < end; ++i) {
      const Leaf& la = mesh.leaves[leaf_pairs[i][0]];
      const Leaf& lb = mesh.leaves[leaf_pairs[i][1]];
      for (Index ta : la) {
        if (ta == kNoIndex || !frames[ta].detectable) continue;
        for (Index tb : lb) {
          if (tb == kNoIndex || !frames[tb].detectable) continue;
          if (share_vertex(frames[ta].vertices, frames[tb].vertices)) continue;
          ++block.tested;
          test_triangle_pair(mesh, frames, ta, tb, block);
        }
      }
    }
  }

  // Gather in block order; raw hit offsets become global.
  std::vector<RawHit> raw;
  std::vector<PairRecord> records;
  std::vector<std::uint64_t> dropped;
  {
    std::size_t hit_total = 0, pair_total = 0, dropped_total = 0;
    for (const Block& block : blocks) {
      hit_total += block.hits.size();
      pair_total += block.pairs.size();
      dropped_total += block.dropped.size();
      out.candidate_pairs += block.tested;
    }
    raw.reserve(hit_total);
    records.reserve(pair_total);
    dropped.reserve(dropped_total);
    for (const Block& block : blocks) {
      const auto offset = static_cast<std::uint32_t>(raw.size());
      raw.insert(raw.end(), block.hits.begin(), block.hits.end());
      for (PairRecord r : block.pairs) {
        r.first += offset;
        records.push_back(r);
      }
      dropped.insert(dropped.end(), block.dropped.begin(), block.dropped.end());
    }
  }
  std::sort(dropped.begin(), dropped.end());
  out.dropped_hits =
      static_cast<std::size_t>(std::unique(dropped.begin(), dropped.end()) - dropped.begin());

  // One hit per (edge, triangle): both copies are bit-identical, so keep the first.
  std::vector<std::pair<std::uint64_t, std::uint32_t>> order(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) {
    order[i] = {raw[i].key, static_cast<std::uint32_t>(i)};
  }
  std::sort(order.begin(), order.end());
  std::vector<std::uint64_t> keys;
  keys.reserve(order.size());
  for (const auto& [key, index] : order) {
    if (keys.empty() || keys.back() != key) {
      keys.push_back(key);
      out.hits.push_back(raw[index].hit);
    }
  }

  std::sort(records.begin(), records.end(), [](const PairRecord& x, const PairRecord& y) {
    return x.a < y.a || (x.a == y.a && x.b < y.b);
  });
  out.pairs.resize(records.size());
  std::vector<std::uint8_t> is_segment(records.size(), 0);
  std::vector<std::array<Index, 2>> segment_hits(records.size());
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < records.size(); ++i) {
    const PairRecord& r = records[i];
    out.pairs[i] = {r.a, r.b};
    if (r.count != 2) continue;
    std::array<Index, 2> h;
    for (std::uint32_t k = 0; k < 2; ++k) {
      const auto it = std::lower_bound(keys.begin(), keys.end(), raw[r.first + k].key);
      h[k] = static_cast<Index>(it - keys.begin());
    }
    if (h[0] > h[1]) std::swap(h[0], h[1]);
    segment_hits[i] = h;
    is_segment[i] = 1;
  }
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (is_segment[i]) out.segments.push_back({{records[i].a, records[i].b}, segment_hits[i]});
  }
  out.narrow_seconds = omp_get_wtime() - t1;
  return out;
}

}  // namespace untangle

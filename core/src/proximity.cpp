#include "untangle/proximity.hpp"

#include <omp.h>

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

#include "parallel_errors.hpp"

namespace untangle {
namespace {

// Kdop18f::overlaps with an early exit after the first four axes (x, y, z, x+y): most volumes
// the search tests are apart there already, and the rest of the volume is not even loaded.
inline bool meet(const Kdop18f& a, const Kdop18f& b) {
#if defined(__SSE2__)
  const __m128 apart = _mm_or_ps(_mm_cmpgt_ps(_mm_load_ps(&a.min[0]), _mm_load_ps(&b.max[0])),
                                 _mm_cmpgt_ps(_mm_load_ps(&b.min[0]), _mm_load_ps(&a.max[0])));
  if (_mm_movemask_ps(apart) != 0) return false;
#endif
  return a.overlaps(b);
}

// Point-triangle pairs of the owned vertices of `points` listed in `live` (bit i: owned vertex i)
// with the triangles of `triangles`.
// The point of the way from `from` to x at part t of it.
Vec3 along(const Positions& from, const Positions& x, Index v, double t) {
  return from[v] + t * (x[v] - from[v]);
}

// Where a signed distance that goes from d0 to d1 on the way passes 0; negative when it keeps
// its sign (touching 0 at an end counts as no crossing: the pair is close there and found so).
double crossing_part(double d0, double d1) {
  if (!((d0 > 0 && d1 < 0) || (d0 < 0 && d1 > 0))) return -1;
  return d0 / (d0 - d1);
}

// Signed distance of p from the plane of triangle (a, b, c); 0 for a degenerate triangle.
double plane_distance(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c) {
  const Vec3 n = (b - a).cross(c - a);
  const double length = n.norm();
  return length > 0 ? (p - a).dot(n) / length : 0.0;
}

// A point that passes through the triangle's plane on the straight way from `from` to x, closer
// than the thickness to the triangle where it does (the plane's crossing taken where the signed
// distance, linear between the ends, is 0: exact for a triangle that does not turn).
bool passes_through(const Positions& from, const Positions& x, Index p,
                    const std::array<Index, 3>& tri, double thickness) {
  const double t = crossing_part(plane_distance(from[p], from[tri[0]], from[tri[1]], from[tri[2]]),
                                 plane_distance(x[p], x[tri[0]], x[tri[1]], x[tri[2]]));
  if (t < 0) return false;
  const Vec3 point = along(from, x, p, t);
  Vec3 barycentric;
  const Vec3 q =
      closest_point_on_triangle(point, along(from, x, tri[0], t), along(from, x, tri[1], t),
                                along(from, x, tri[2], t), barycentric);
  return (point - q).squaredNorm() < thickness * thickness;
}

void point_triangle_pairs(const ClothMesh& mesh, const Positions& x, const Positions* from,
                          const ProximitySearch::PrimitiveVolumes& volumes,
                          const ProximitySearch::LeafParts& points, unsigned live,
                          const ProximitySearch::LeafParts& triangles, double thickness,
                          std::vector<PointTrianglePair>& out) {
  for (; live != 0; live &= live - 1) {
    const Index p = points.owned_vertices[std::countr_zero(live)];
    for (int j = 0; j < triangles.triangle_count; ++j) {
      const Index t = triangles.triangles[j];
      const auto& tri = mesh.triangles[t];
      if (!meet(volumes.vertices[p], volumes.triangles[t])) continue;
      Vec3 barycentric;
      const Vec3 q = closest_point_on_triangle(x[p], x[tri[0]], x[tri[1]], x[tri[2]], barycentric);
      if ((x[p] - q).squaredNorm() < thickness * thickness ||
          (from != nullptr && passes_through(*from, x, p, tri, thickness))) {
        out.push_back({p, t});
      }
    }
  }
}

// Edge-edge pairs of the owned edges of a and b listed in `live` (bit 5 i + j: owned edge i of a
// with owned edge j of b).
// Two segments closer than the thickness at interior points (where a closest point is an end
// point, the point-triangle pairs hold the contact).
bool close_inside(const Vec3& a0, const Vec3& a1, const Vec3& b0, const Vec3& b1,
                  double thickness) {
  double s = 0, t = 0;
  closest_points_of_segments(a0, a1, b0, b1, s, t);
  if (s <= 0 || s >= 1 || t <= 0 || t >= 1) return false;
  const Vec3 pa = a0 + s * (a1 - a0);
  const Vec3 pb = b0 + t * (b1 - b0);
  return (pa - pb).squaredNorm() < thickness * thickness;
}

// Signed distance between the lines of two segments, along their common normal; 0 when parallel.
double line_distance(const Vec3& a0, const Vec3& a1, const Vec3& b0, const Vec3& b1) {
  const Vec3 n = (a1 - a0).cross(b1 - b0);
  const double length = n.norm();
  return length > 0 ? (b0 - a0).dot(n) / length : 0.0;
}

// Two edges that pass through each other on the straight way from `from` to x, as
// passes_through for a point and a triangle.
bool edges_pass(const Positions& from, const Positions& x, const std::array<Index, 2>& ea,
                const std::array<Index, 2>& eb, double thickness) {
  const double t = crossing_part(line_distance(from[ea[0]], from[ea[1]], from[eb[0]], from[eb[1]]),
                                 line_distance(x[ea[0]], x[ea[1]], x[eb[0]], x[eb[1]]));
  if (t < 0) return false;
  return close_inside(along(from, x, ea[0], t), along(from, x, ea[1], t), along(from, x, eb[0], t),
                      along(from, x, eb[1], t), thickness);
}

void edge_edge_pairs(const ClothMesh& mesh, const Positions& x, const Positions* from,
                     const ProximitySearch::PrimitiveVolumes& volumes,
                     const ProximitySearch::LeafParts& a, const ProximitySearch::LeafParts& b,
                     std::uint32_t live, double thickness, std::vector<EdgeEdgePair>& out) {
  for (; live != 0; live &= live - 1) {
    const int bit = std::countr_zero(live);
    const Index e0 = a.owned_edges[bit / 5], e1 = b.owned_edges[bit % 5];
    const auto& ea = mesh.edges[e0].vertices;
    const auto& eb = mesh.edges[e1].vertices;
    if (!meet(volumes.edges[e0], volumes.edges[e1])) continue;
    if (close_inside(x[ea[0]], x[ea[1]], x[eb[0]], x[eb[1]], thickness) ||
        (from != nullptr && edges_pass(*from, x, ea, eb, thickness))) {
      out.push_back({{std::min(e0, e1), std::max(e0, e1)}});
    }
  }
}

// All owned vertices of a leaf, as bits.
unsigned all_points(const ProximitySearch::LeafParts& parts) {
  return (1u << parts.owned_vertex_count) - 1;
}

// All pairs of owned edges of two leaves, as bits 5 i + j.
std::uint32_t all_edge_pairs(const ProximitySearch::LeafParts& a,
                             const ProximitySearch::LeafParts& b) {
  const std::uint32_t row = (std::uint32_t{1} << b.owned_edge_count) - 1;
  std::uint32_t all = 0;
  for (int i = 0; i < a.owned_edge_count; ++i) all |= row << (5 * i);
  return all;
}

template <typename T>
void sort_unique(std::vector<T>& items) {
  std::sort(items.begin(), items.end());
  items.erase(std::unique(items.begin(), items.end()), items.end());
}

}  // namespace

Vec3 closest_point_on_triangle(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c,
                               Vec3& barycentric) {
  const Vec3 ab = b - a, ac = c - a, ap = p - a;
  const double d1 = ab.dot(ap), d2 = ac.dot(ap);
  if (d1 <= 0 && d2 <= 0) {
    barycentric = Vec3(1, 0, 0);
    return a;
  }
  const Vec3 bp = p - b;
  const double d3 = ab.dot(bp), d4 = ac.dot(bp);
  if (d3 >= 0 && d4 <= d3) {
    barycentric = Vec3(0, 1, 0);
    return b;
  }
  // Each edge region asks for an edge of non-zero length (d1 - d3 = |ab|^2, d2 - d6 = |ac|^2,
  // the sum for bc = |bc|^2): two equal corners would give 0 / 0. The other regions hold p then.
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0 && d1 - d3 > 0) {
    const double v = d1 / (d1 - d3);
    barycentric = Vec3(1 - v, v, 0);
    return a + v * ab;
  }
  const Vec3 cp = p - c;
  const double d5 = ab.dot(cp), d6 = ac.dot(cp);
  if (d6 >= 0 && d5 <= d6) {
    barycentric = Vec3(0, 0, 1);
    return c;
  }
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0 && d2 - d6 > 0) {
    const double w = d2 / (d2 - d6);
    barycentric = Vec3(1 - w, 0, w);
    return a + w * ac;
  }
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0 && (d4 - d3) + (d5 - d6) > 0) {
    const double w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
    barycentric = Vec3(0, 1 - w, w);
    return b + w * (c - b);
  }
  const double sum = va + vb + vc;
  if (!(sum > 0)) {  // a degenerate triangle: its first corner is as good as any point
    barycentric = Vec3(1, 0, 0);
    return a;
  }
  const double v = vb / sum, w = vc / sum;
  barycentric = Vec3(1 - v - w, v, w);
  return a + v * ab + w * ac;
}

void closest_points_of_segments(const Vec3& a0, const Vec3& a1, const Vec3& b0, const Vec3& b1,
                                double& s, double& t) {
  constexpr double kTiny = 1e-20;
  const Vec3 d1 = a1 - a0, d2 = b1 - b0, r = a0 - b0;
  const double a = d1.squaredNorm(), e = d2.squaredNorm(), f = d2.dot(r);
  if (a <= kTiny && e <= kTiny) {
    s = t = 0;
    return;
  }
  if (a <= kTiny) {
    s = 0;
    t = std::clamp(f / e, 0.0, 1.0);
    return;
  }
  const double c = d1.dot(r);
  if (e <= kTiny) {
    t = 0;
    s = std::clamp(-c / a, 0.0, 1.0);
    return;
  }
  const double b = d1.dot(d2), denominator = a * e - b * b;
  // Parallel segments have no unique pair: any s works, take 0 as Ericson does.
  s = denominator > kTiny * a * e ? std::clamp((b * f - c * e) / denominator, 0.0, 1.0) : 0.0;
  t = (b * s + f) / e;
  if (t < 0) {
    t = 0;
    s = std::clamp(-c / a, 0.0, 1.0);
  } else if (t > 1) {
    t = 1;
    s = std::clamp((b - c) / a, 0.0, 1.0);
  }
}

namespace {

template <std::size_t N>
bool add_unique(std::array<Index, N>& items, int& count, Index item) {
  for (int i = 0; i < count; ++i) {
    if (items[i] == item) return false;
  }
  items[count++] = item;
  return true;
}

bool holds(const ProximitySearch::LeafParts& p, Index vertex) {
  for (int k = 0; k < p.vertex_count; ++k) {
    if (p.vertices[k] == vertex) return true;
  }
  return false;
}

void list_detectable_triangles(const ClothMesh& mesh, Index leaf, ProximitySearch::LeafParts& p) {
  p.triangle_count = 0;
  for (Index t : mesh.leaves[leaf]) {
    if (t != kNoIndex && mesh.triangle_detectable[t]) p.triangles[p.triangle_count++] = t;
  }
}

// Each vertex and each edge is owned by one leaf (that of its first triangle) and tested only from
// there: a close pair still meets, since the owner's volume holds the vertex or edge, and every
// pair is tested once instead of up to four times.
std::vector<ProximitySearch::LeafParts> find_leaf_parts(const ClothMesh& mesh) {
  std::vector<Index> vertex_leaf(mesh.vertex_count(), kNoIndex);
  std::vector<Index> edge_leaf(mesh.edges.size(), kNoIndex);
  for (std::size_t leaf = 0; leaf < mesh.leaves.size(); ++leaf) {
    for (Index t : mesh.leaves[leaf]) {
      if (t == kNoIndex) continue;
      for (int k = 0; k < 3; ++k) {
        Index& v = vertex_leaf[mesh.triangles[t][k]];
        if (v == kNoIndex) v = static_cast<Index>(leaf);
        Index& e = edge_leaf[mesh.triangle_edges[t][k]];
        if (e == kNoIndex) e = static_cast<Index>(leaf);
      }
    }
  }
  std::vector<ProximitySearch::LeafParts> parts(mesh.leaves.size());
  for (std::size_t leaf = 0; leaf < mesh.leaves.size(); ++leaf) {
    ProximitySearch::LeafParts& p = parts[leaf];
    list_detectable_triangles(mesh, static_cast<Index>(leaf), p);
    for (Index t : mesh.leaves[leaf]) {
      if (t == kNoIndex) continue;
      for (int k = 0; k < 3; ++k) {
        const Index v = mesh.triangles[t][k];
        if (add_unique(p.vertices, p.vertex_count, v) && vertex_leaf[v] == leaf) {
          p.owned_vertices[p.owned_vertex_count++] = v;
        }
        const Index e = mesh.triangle_edges[t][k];
        if (edge_leaf[e] == leaf) add_unique(p.owned_edges, p.owned_edge_count, e);
      }
    }
  }
  return parts;
}

// The top of the trees is unrolled into about kTargetTasks tasks for the threads; with fewer than
// kParallelTasks (tiny meshes) the walk runs on one thread, and with fewer than
// kParallelLeafPairs leaf pairs so do their tests.
constexpr std::size_t kParallelTasks = 16;
constexpr std::size_t kTargetTasks = 256;
constexpr std::size_t kParallelLeafPairs = 256;
constexpr std::ptrdiff_t kParallelLeaves = 1024;

// The volumes are inflated by kReuseMargin times the thickness beyond what a search needs, so
// the leaf pairs they give stay valid for the leaves whose particles have moved less than that
// since: the searches until then only test those pairs again, and look up the few leaves that
// moved farther on the trees at their current volumes. A larger margin walks less often but keeps
// more leaf pairs, most of which the box test of the search then skips cheaply. 10k-vertex
// sphere bake (untangler frames, 1 thread, CPU time, when any move beyond the margin meant a new
// walk): margin 1: 14.4 s, 2: 11.9 s, 3: 10.9 s, 4: 9.8 s, 6: 12.1 s; dropped cloth and two
// sheets (200 frames) 3 against 1: 0.80 against 0.88 s and 0.74 against 0.72 s.
constexpr double kReuseMargin = 3.0;
// Once more than this share of the leaves have moved beyond the margin, the trees are walked
// again: looking up each such leaf would cost more. (On the sphere bake either a few leaves move
// that far or, at a new cache frame, all: 1/4 to 1/32 walk equally often.)
constexpr std::size_t kWalkWhenMovedLeavesPerLeaf = 8;

}  // namespace

ProximitySearch::ProximitySearch(const Bvh& bvh)
    : bvh_(&bvh), parts_(find_leaf_parts(bvh.mesh())), volumes_(bvh.nodes().size()) {
  nodes_.reserve(bvh.nodes().size());
  for (const BvhNode& node : bvh.nodes()) {
    if (node.leaf != kNoIndex) leaf_nodes_.push_back(static_cast<Index>(nodes_.size()));
    nodes_.push_back({node.left, node.right, node.leaf});
  }
  find_skips();
}

void ProximitySearch::update_detectable_triangles() {
  const ClothMesh& mesh = bvh_->mesh();
  for (std::size_t leaf = 0; leaf < parts_.size(); ++leaf) {
    list_detectable_triangles(mesh, static_cast<Index>(leaf), parts_[leaf]);
  }
}

// Only leaves that hold a vertex of a's leaf or of its ring can hold a neighbour of a's points or
// edges: those are the candidates for b. Marks instead of a ring scan per test: near[w] has bit
// k when w is a's vertex k or shares a polygon with it (the ring rule), and bit 4 + k when w is
// a's vertex k (the shared-vertex rule). Sharing a polygon is symmetric, so "p touches a vertex
// of a" and "a vertex of a touches p" read the same marks.
void ProximitySearch::find_skips() {
  const ClothMesh& mesh = bvh_->mesh();
  skip_offsets_.assign(parts_.size() + 1, 0);
  std::vector<std::uint8_t> near(mesh.vertex_count(), 0);
  std::vector<Index> marked, others;
  std::array<std::vector<Index>, 5> edge_leaves;
  for (std::size_t a = 0; a < parts_.size(); ++a) {
    const LeafParts& pa = parts_[a];
    marked.clear();
    auto mark = [&](Index w, unsigned bits) {
      if (near[w] == 0) marked.push_back(w);
      near[w] = static_cast<std::uint8_t>(near[w] | bits);
    };
    for (int k = 0; k < pa.vertex_count; ++k) {
      mark(pa.vertices[k], (1u << k) | (16u << k));
      for (Index r : mesh.vertex_ring[pa.vertices[k]]) mark(r, 1u << k);
    }
    auto bit_of = [&](Index v) {  // v is a vertex of a's leaf
      unsigned bit = 0;
      for (int k = 0; k < pa.vertex_count; ++k) bit |= pa.vertices[k] == v ? 1u << k : 0u;
      return bit;
    };
    std::array<unsigned, 4> owned_bits{};
    for (int i = 0; i < pa.owned_vertex_count; ++i) owned_bits[i] = bit_of(pa.owned_vertices[i]);
    std::array<std::array<unsigned, 2>, 5> edge_end_bits{};
    // Per owned edge, the leaves that hold both its ends: an edge of b with both ends in one of
    // them is another side of that leaf's quad, whichever leaves own the two sides.
    for (auto& leaves : edge_leaves) leaves.clear();
    for (int i = 0; i < pa.owned_edge_count; ++i) {
      const auto& ea = mesh.edges[pa.owned_edges[i]].vertices;
      edge_end_bits[i] = {bit_of(ea[0]), bit_of(ea[1])};
      for (Index t : mesh.vertex_triangles[ea[0]]) {
        const Index c = mesh.triangle_leaf[t];
        if (holds(parts_[c], ea[1])) edge_leaves[i].push_back(c);
      }
      sort_unique(edge_leaves[i]);
    }
    others.clear();
    for (Index w : marked) {
      for (Index t : mesh.vertex_triangles[w]) {
        if (mesh.triangle_leaf[t] > a) others.push_back(mesh.triangle_leaf[t]);
      }
    }
    sort_unique(others);
    for (Index b : others) {
      const LeafParts& pb = parts_[b];
      unsigned near_b = 0;  // the vertices of a that touch (or are) some vertex of b
      for (int j = 0; j < pb.vertex_count; ++j) near_b |= near[pb.vertices[j]];
      Skips skips{b, {}, {}};
      for (const bool ring : {true, false}) {
        SkipMasks& masks = ring ? skips.ring : skips.shared;
        const int rule = ring ? 0 : 4;
        for (int i = 0; i < pa.owned_vertex_count; ++i) {
          if ((near_b >> rule) & owned_bits[i]) masks.points_a |= 1u << i;
        }
        for (int j = 0; j < pb.owned_vertex_count; ++j) {
          if ((near[pb.owned_vertices[j]] >> rule) & 15u) masks.points_b |= 1u << j;
        }
        for (int j = 0; j < pb.owned_edge_count; ++j) {
          const auto& eb = mesh.edges[pb.owned_edges[j]].vertices;
          const unsigned near_edge = ((near[eb[0]] | near[eb[1]]) >> rule) & 15u;
          for (int i = 0; i < pa.owned_edge_count; ++i) {
            const auto& ends = edge_end_bits[i];
            // Two sides of one quad are neighbours under either rule (as within one leaf).
            const bool one_leaf = std::any_of(
                edge_leaves[i].begin(), edge_leaves[i].end(),
                [&](Index c) { return holds(parts_[c], eb[0]) && holds(parts_[c], eb[1]); });
            if (one_leaf || (near_edge & (ends[0] | ends[1])) != 0) {
              masks.edges |= std::uint32_t{1} << (5 * i + j);
            }
          }
        }
      }
      // The ring rule skips all that the shared-vertex rule does and more.
      if (skips.ring.points_a != 0 || skips.ring.points_b != 0 || skips.ring.edges != 0) {
        skips_.push_back(skips);
      }
    }
    skip_offsets_[a + 1] = static_cast<Index>(skips_.size());

    for (Index w : marked) near[w] = 0;
  }
}

Kdop18f ProximitySearch::leaf_volume(Index leaf, const Positions& x, double inflation) const {
  Kdop18 volume;
  const LeafParts& parts = parts_[leaf];
  for (int i = 0; i < parts.vertex_count; ++i) {
    volume.add(x[parts.vertices[i]]);
    if (from_ != nullptr) volume.add((*from_)[parts.vertices[i]]);
  }
  volume.inflate(inflation);
  return Kdop18f(volume);
}

void ProximitySearch::refit(const Positions& x, double inflation) {
  const auto leaf_count = static_cast<std::ptrdiff_t>(leaf_nodes_.size());
#pragma omp parallel for schedule(static) if (leaf_count >= kParallelLeaves)
  for (std::ptrdiff_t k = 0; k < leaf_count; ++k) {
    const Index n = leaf_nodes_[k];
    volumes_[n] = leaf_volume(nodes_[n].leaf, x, inflation);
  }
  // Children come after their parent, so a backward sweep meets them first.
  for (std::size_t n = nodes_.size(); n-- > 0;) {
    const Node& node = nodes_[n];
    if (node.leaf != kNoIndex) continue;
    volumes_[n] = volumes_[node.left];
    volumes_[n].merge(volumes_[node.right]);
  }
}

ProximitySearch::LiveTests ProximitySearch::live_tests(Index a, Index b, bool ring_pairs) const {
  if (a > b) std::swap(a, b);
  const auto begin = skips_.begin() + skip_offsets_[a];
  const auto end = skips_.begin() + skip_offsets_[a + 1];
  const auto found = std::lower_bound(
      begin, end, b, [](const Skips& skips, Index leaf) { return skips.other < leaf; });
  const Skips skips = found != end && found->other == b ? *found : Skips{b, {}, {}};
  const SkipMasks& masks = ring_pairs ? skips.shared : skips.ring;
  const LeafParts& pa = parts_[a];
  const LeafParts& pb = parts_[b];
  return {static_cast<std::uint8_t>(all_points(pa) & ~unsigned{masks.points_a}),
          static_cast<std::uint8_t>(all_points(pb) & ~unsigned{masks.points_b}), true,
          all_edge_pairs(pa, pb) & ~masks.edges};
}

void ProximitySearch::test_leaves(const CloseLeafPair& pair, const LiveTests& tests,
                                  const Positions& x, double thickness, ProximityPairs& out) const {
  const ClothMesh& mesh = bvh_->mesh();
  const LeafParts& pa = parts_[pair.a];
  const LeafParts& pb = parts_[pair.b];
  const Kdop18f& box_a = leaf_boxes_[pair.a];
  const Kdop18f& box_b = leaf_boxes_[pair.b];
  const PrimitiveVolumes& volumes = primitive_volumes_;
  // A point or edge whose volume misses the other leaf's box meets none of its parts: one test
  // instead of a row of them (neighbouring leaves meet only at a corner or a side).
  unsigned points_a = tests.points_a, points_b = tests.points_b;
  std::uint32_t edges = tests.edges;
  for (int i = 0; i < pa.owned_vertex_count; ++i) {
    if (!meet(volumes.vertices[pa.owned_vertices[i]], box_b)) points_a &= ~(1u << i);
  }
  for (int j = 0; j < pb.owned_vertex_count; ++j) {
    if (!meet(volumes.vertices[pb.owned_vertices[j]], box_a)) points_b &= ~(1u << j);
  }
  if (edges != 0) {
    constexpr std::uint32_t kRow = 0x1f, kColumn = 0x108421;  // bits 5 i + j for one i or j
    for (int i = 0; i < pa.owned_edge_count; ++i) {
      if (!meet(volumes.edges[pa.owned_edges[i]], box_b)) edges &= ~(kRow << (5 * i));
    }
    for (int j = 0; j < pb.owned_edge_count; ++j) {
      if (!meet(volumes.edges[pb.owned_edges[j]], box_a)) edges &= ~(kColumn << j);
    }
  }
  point_triangle_pairs(mesh, x, from_, volumes, pa, points_a, pb, thickness, out.point_triangle);
  point_triangle_pairs(mesh, x, from_, volumes, pb, points_b, pa, thickness, out.point_triangle);
  edge_edge_pairs(mesh, x, from_, volumes, pa, pb, edges, thickness, out.edge_edge);
}

// The children of a node pair to test next: both sides are split while both can be, which
// visits fewer node pairs than splitting one side at a time.
template <typename Visit>
void ProximitySearch::children(Task task, Visit&& visit) const {
  const Node& a = nodes_[task.a];
  if (task.a == task.b) {
    if (a.leaf != kNoIndex) return;
    // A leaf is not paired with itself: its points and edges are all neighbours.
    if (nodes_[a.left].leaf == kNoIndex) visit(Task{a.left, a.left});
    if (nodes_[a.right].leaf == kNoIndex) visit(Task{a.right, a.right});
    visit(Task{a.left, a.right});
    return;
  }
  if (!volumes_[task.a].overlaps(volumes_[task.b])) return;
  const Node& b = nodes_[task.b];
  if (a.leaf != kNoIndex && b.leaf != kNoIndex) {
    visit(Task{kNoIndex, kNoIndex});  // the leaf pair itself
  } else if (a.leaf != kNoIndex) {
    visit(Task{task.a, b.left});
    visit(Task{task.a, b.right});
  } else if (b.leaf != kNoIndex) {
    visit(Task{a.left, task.b});
    visit(Task{a.right, task.b});
  } else {
    visit(Task{a.left, b.left});
    visit(Task{a.left, b.right});
    visit(Task{a.right, b.left});
    visit(Task{a.right, b.right});
  }
}

void ProximitySearch::run(Task task, std::vector<CloseLeafPair>& out) const {
  children(task, [&](Task child) {
    if (child.a == kNoIndex) {
      const Index a = nodes_[task.a].leaf, b = nodes_[task.b].leaf;
      out.push_back({std::min(a, b), std::max(a, b)});
    } else {
      run(child, out);
    }
  });
}

void ProximitySearch::find_leaf_pairs(const Positions& x, double inflation) {
  refit(x, inflation);
  // The top of the trees unrolled breadth-first into tasks, the same on any thread count.
  const auto roots = bvh_->roots();
  tasks_.clear();
  for (std::size_t p = 0; p < roots.size(); ++p) {
    if (roots[p] == kNoIndex) continue;
    tasks_.push_back({roots[p], roots[p]});
    for (std::size_t q = p + 1; q < roots.size(); ++q) {
      if (roots[q] != kNoIndex) tasks_.push_back({roots[p], roots[q]});
    }
  }
  for (int round = 0; round < 8 && tasks_.size() < kTargetTasks; ++round) {
    next_tasks_.clear();
    for (const Task& task : tasks_) {
      children(task,
               [&](Task child) { next_tasks_.push_back(child.a == kNoIndex ? task : child); });
    }
    tasks_.swap(next_tasks_);
  }
  thread_leaf_pairs_.resize(static_cast<std::size_t>(std::max(1, omp_get_max_threads())));
  for (std::vector<CloseLeafPair>& pairs : thread_leaf_pairs_) pairs.clear();
  const auto task_count = static_cast<std::ptrdiff_t>(tasks_.size());
  ParallelErrors errors;
#pragma omp parallel for schedule(dynamic, 1) if (tasks_.size() >= kParallelTasks)
  for (std::ptrdiff_t k = 0; k < task_count; ++k) {
    errors.run([&] {
      run(tasks_[k], thread_leaf_pairs_[static_cast<std::size_t>(omp_get_thread_num())]);
    });
  }
  errors.rethrow();
  // In whatever order the threads found them: the pairs found in them are sorted at the end.
  leaf_pairs_.clear();
  for (const std::vector<CloseLeafPair>& pairs : thread_leaf_pairs_) {
    leaf_pairs_.insert(leaf_pairs_.end(), pairs.begin(), pairs.end());
  }
}

void ProximitySearch::find_moved_leaves(const Positions& x, double margin) {
  const auto vertex_count = static_cast<std::ptrdiff_t>(x.size());
  vertex_moved_.resize(x.size());
  const double limit = margin * margin;
#pragma omp parallel for schedule(static) if (vertex_count >= kParallelLeaves)
  for (std::ptrdiff_t v = 0; v < vertex_count; ++v) {
    vertex_moved_[v] =
        !((x[v] - walked_positions_[v]).squaredNorm() < limit) ||
        (from_ != nullptr && !(((*from_)[v] - walked_from_[v]).squaredNorm() < limit));
  }
  leaf_moved_.assign(parts_.size(), 0);
  moved_leaves_.clear();
  for (std::size_t leaf = 0; leaf < parts_.size(); ++leaf) {
    const LeafParts& parts = parts_[leaf];
    for (int i = 0; i < parts.vertex_count; ++i) {
      if (vertex_moved_[parts.vertices[i]]) {
        leaf_moved_[leaf] = 1;
        moved_leaves_.push_back(static_cast<Index>(leaf));
        break;
      }
    }
  }
}

void ProximitySearch::look_up(Index leaf, const Positions& x, double thickness, bool ring_pairs,
                              std::vector<Index>& stack, ProximityPairs& out) const {
  const Kdop18f& box = leaf_boxes_[leaf];
  stack.clear();
  for (Index root : bvh_->roots()) {
    if (root != kNoIndex) stack.push_back(root);
  }
  while (!stack.empty()) {
    const Index n = stack.back();
    stack.pop_back();
    if (!meet(current_volumes_[n], box)) continue;
    const Node& node = nodes_[n];
    if (node.leaf == kNoIndex) {
      stack.push_back(node.left);
      stack.push_back(node.right);
      continue;
    }
    // Two moved leaves meet in the look-up of the first; a leaf is not paired with itself.
    const Index other = node.leaf;
    if (other == leaf || (leaf_moved_[other] && other < leaf)) continue;
    const CloseLeafPair pair{std::min(leaf, other), std::max(leaf, other)};
    const LiveTests tests = live_tests(pair.a, pair.b, ring_pairs);
    if (tests.points_a != 0 || tests.points_b != 0 || tests.edges != 0) {
      test_leaves(pair, tests, x, thickness, out);
    }
  }
}

const ProximityPairs& ProximitySearch::find(const Positions& x, double thickness, bool ring_pairs,
                                            const Positions* from) {
  if (x.size() != bvh_->mesh().vertex_count() || (from != nullptr && from->size() != x.size())) {
    throw std::invalid_argument("ProximitySearch::find: " + std::to_string(x.size()) +
                                " positions for a mesh of " +
                                std::to_string(bvh_->mesh().vertex_count()) + " vertices");
  }
  from_ = from;
  result_.point_triangle.clear();
  result_.edge_edge.clear();
  if (!(thickness > 0)) return result_;
  const double margin = kReuseMargin * thickness;
  bool walk = thickness != walked_thickness_ || walked_positions_.size() != x.size() ||
              (from != nullptr) != walked_swept_;
  if (!walk) {
    find_moved_leaves(x, margin);
    walk = moved_leaves_.size() * kWalkWhenMovedLeavesPerLeaf > parts_.size();
  }
  if (walk) {
    // A walk that throws (out of memory) must leave nothing a later search would trust.
    walked_positions_.clear();
    live_.clear();
    // Two primitives closer than the thickness are closer than that along every axis; each moves
    // less than the margin until the next walk, or its leaf is looked up.
    find_leaf_pairs(x, 0.5 * thickness + margin);
    walked_positions_ = x;
    walked_thickness_ = thickness;
    walked_swept_ = from != nullptr;
    if (from != nullptr) walked_from_ = *from;
    moved_leaves_.clear();
    live_.clear();
  }
  if (live_.empty() || ring_pairs != live_ring_pairs_) {
    live_.assign(leaf_pairs_.size(), LiveTests{});
    live_ring_pairs_ = ring_pairs;
  }

  found_.resize(static_cast<std::size_t>(std::max(1, omp_get_max_threads())));
  stacks_.resize(found_.size());
  current_volumes_.resize(nodes_.size());
  for (ProximityPairs& part : found_) {
    part.point_triangle.clear();
    part.edge_edge.clear();
  }
  const ClothMesh& mesh = bvh_->mesh();
  static const Kdop18f empty_volume{Kdop18()};  // meets nothing
  leaf_boxes_.resize(parts_.size());
  PrimitiveVolumes& volumes = primitive_volumes_;
  volumes.vertices.resize(x.size());
  volumes.triangles.resize(mesh.triangles.size());
  volumes.edges.resize(mesh.edges.size());
  const auto vertex_count = static_cast<std::ptrdiff_t>(x.size());
  const auto triangle_count = static_cast<std::ptrdiff_t>(mesh.triangles.size());
  const auto edge_count = static_cast<std::ptrdiff_t>(mesh.edges.size());
  const auto leaf_pair_count = static_cast<std::ptrdiff_t>(leaf_pairs_.size());
  const auto leaf_count = static_cast<std::ptrdiff_t>(parts_.size());
  ParallelErrors errors;  // the pairs found grow per-thread lists
#pragma omp parallel if (leaf_pairs_.size() >= kParallelLeafPairs)
  {
    // Only the vertices' volumes are rounded to floats; those of the leaves, triangles and edges
    // are exact merges of their corners'.
#pragma omp for schedule(static)
    for (std::ptrdiff_t v = 0; v < vertex_count; ++v) {
      Kdop18 volume;
      volume.add(x[v]);
      if (from != nullptr) volume.add((*from)[v]);  // the whole way, for the swept tests
      volume.inflate(0.5 * thickness);
      volumes.vertices[v] = Kdop18f(volume);
    }
#pragma omp for schedule(static) nowait
    for (std::ptrdiff_t leaf = 0; leaf < leaf_count; ++leaf) {
      const LeafParts& parts = parts_[leaf];
      Kdop18f& box = leaf_boxes_[leaf];
      box = parts.vertex_count > 0 ? volumes.vertices[parts.vertices[0]] : empty_volume;
      for (int i = 1; i < parts.vertex_count; ++i) box.merge(volumes.vertices[parts.vertices[i]]);
    }
#pragma omp for schedule(static) nowait
    for (std::ptrdiff_t t = 0; t < triangle_count; ++t) {
      const auto& tri = mesh.triangles[t];
      volumes.triangles[t] = volumes.vertices[tri[0]];
      volumes.triangles[t].merge(volumes.vertices[tri[1]]);
      volumes.triangles[t].merge(volumes.vertices[tri[2]]);
    }
#pragma omp for schedule(static)
    for (std::ptrdiff_t e = 0; e < edge_count; ++e) {
      const auto& ends = mesh.edges[e].vertices;
      volumes.edges[e] = volumes.vertices[ends[0]];
      volumes.edges[e].merge(volumes.vertices[ends[1]]);
    }
    // The leaves that moved beyond the margin since the walk are looked up on the trees at the
    // current volumes: that finds all their pairs, so the walk's list below skips them.
    if (!moved_leaves_.empty()) {
#pragma omp single
      {
        for (std::size_t k = 0; k < leaf_nodes_.size(); ++k) {
          current_volumes_[leaf_nodes_[k]] = leaf_boxes_[nodes_[leaf_nodes_[k]].leaf];
        }
        for (std::size_t n = nodes_.size(); n-- > 0;) {
          const Node& node = nodes_[n];
          if (node.leaf != kNoIndex) continue;
          current_volumes_[n] = current_volumes_[node.left];
          current_volumes_[n].merge(current_volumes_[node.right]);
        }
      }
      const auto moved_count = static_cast<std::ptrdiff_t>(moved_leaves_.size());
      const auto thread = static_cast<std::size_t>(omp_get_thread_num());
#pragma omp for schedule(dynamic, 16) nowait
      for (std::ptrdiff_t k = 0; k < moved_count; ++k) {
        errors.run([&] {
          look_up(moved_leaves_[k], x, thickness, ring_pairs, stacks_[thread], found_[thread]);
        });
      }
    }
#pragma omp for schedule(dynamic, 64)
    for (std::ptrdiff_t k = 0; k < leaf_pair_count; ++k) {
      const CloseLeafPair& pair = leaf_pairs_[k];
      if (!moved_leaves_.empty() && (leaf_moved_[pair.a] || leaf_moved_[pair.b])) continue;
      if (!meet(leaf_boxes_[pair.a], leaf_boxes_[pair.b])) continue;
      errors.run([&] {
        LiveTests& tests = live_[k];
        if (!tests.known) tests = live_tests(pair.a, pair.b, ring_pairs);
        if (tests.points_a == 0 && tests.points_b == 0 && tests.edges == 0) return;
        test_leaves(pair, tests, x, thickness,
                    found_[static_cast<std::size_t>(omp_get_thread_num())]);
      });
    }
  }
  errors.rethrow();
  // Which thread found a pair varies; sorting makes the result independent of that.
  for (const ProximityPairs& part : found_) {
    result_.point_triangle.insert(result_.point_triangle.end(), part.point_triangle.begin(),
                                  part.point_triangle.end());
    result_.edge_edge.insert(result_.edge_edge.end(), part.edge_edge.begin(), part.edge_edge.end());
  }
  sort_unique(result_.point_triangle);
  sort_unique(result_.edge_edge);
  return result_;
}

}  // namespace untangle

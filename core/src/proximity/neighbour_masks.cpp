// The neighbour rules as bit masks per leaf pair: which of a leaf pair's point-triangle and
// edge-edge tests pair topological neighbours (worked out once per mesh) and so are skipped.
#include "internal.hpp"

namespace untangle {
namespace {

bool holds(const ProximitySearch::LeafParts& p, Index vertex) {
  for (int k = 0; k < p.vertex_count; ++k) {
    if (p.vertices[k] == vertex) return true;
  }
  return false;
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

}  // namespace

using proximity_detail::sort_unique;

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

}  // namespace untangle

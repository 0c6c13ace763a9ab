#include "untangle/weld.hpp"

#include <algorithm>
#include <numeric>

namespace untangle {

namespace {

// What ClothMesh::build would refuse is checked by its own validation before the weld reads any
// index or sorts any position: such input goes to the build unwelded, which names the error in
// the input's pieces, faces and vertices.
bool weldable(std::span<const PolygonMesh> pieces, std::span<const Positions* const> agree,
              std::size_t total) {
  try {
    ClothMesh::validate(pieces);
  } catch (const MeshError&) {
    return false;
  }
  for (const Positions* set : agree) {
    if (set == nullptr || set->size() != total) return false;
    for (const Vec3& p : *set) {
      if (!p.allFinite()) return false;
    }
  }
  return true;
}

// -1, 0 or 1 as p is before, at or after q, coordinate by coordinate.
int compare(const Vec3& p, const Vec3& q) {
  for (int k = 0; k < 3; ++k) {
    if (p[k] < q[k]) return -1;
    if (p[k] > q[k]) return 1;
  }
  return 0;
}

Index root_of(std::vector<Index>& parent, Index i) {
  while (parent[i] != i) {
    parent[i] = parent[parent[i]];
    i = parent[i];
  }
  return i;
}

}  // namespace

Positions Weld::to_welded(const Positions& input) const {
  Positions out(first_copy.size());
  for (std::size_t w = 0; w < first_copy.size(); ++w) out[w] = input[first_copy[w]];
  return out;
}

std::vector<double> Weld::to_welded_inverse_mass(const std::vector<double>& input) const {
  if (input.empty()) return {};
  std::vector<double> out(first_copy.size());
  for (std::size_t w = 0; w < first_copy.size(); ++w) out[w] = input[first_copy[w]];
  for (std::size_t v = 0; v < welded_of.size(); ++v) {
    out[welded_of[v]] = std::min(out[welded_of[v]], input[v]);
  }
  return out;
}

Positions Weld::to_input(const Positions& welded) const {
  Positions out(welded_of.size());
  for (std::size_t v = 0; v < welded_of.size(); ++v) out[v] = welded[welded_of[v]];
  return out;
}

Weld unsewn(std::span<const PolygonMesh> pieces) {
  Weld weld;
  weld.pieces.assign(pieces.begin(), pieces.end());
  std::size_t total = 0;
  for (const PolygonMesh& piece : pieces) total += piece.positions.size();
  weld.welded_of.resize(total);
  std::iota(weld.welded_of.begin(), weld.welded_of.end(), Index{0});
  weld.first_copy = weld.welded_of;
  return weld;
}

Weld sew_seams(std::span<const PolygonMesh> pieces, std::span<const Positions* const> agree) {
  std::size_t total = 0;
  for (const PolygonMesh& piece : pieces) total += piece.positions.size();
  Positions input;
  std::vector<Index> piece_of, piece_begin{0};
  input.reserve(total);
  for (std::size_t p = 0; p < pieces.size(); ++p) {
    input.insert(input.end(), pieces[p].positions.begin(), pieces[p].positions.end());
    piece_of.insert(piece_of.end(), pieces[p].positions.size(), static_cast<Index>(p));
    piece_begin.push_back(static_cast<Index>(input.size()));
  }

  // Each vertex's representative in the welded mesh: itself, or for a sewn copy the first sewn
  // copy at its place (below). Places are found by one sort over the pieces' positions and
  // every set of `agree`.
  std::vector<Index> first(total);
  std::iota(first.begin(), first.end(), Index{0});
  if (!weldable(pieces, agree, total)) return unsewn(pieces);
  auto place_order = [&](Index a, Index b) {
    int c = compare(input[a], input[b]);
    for (std::size_t s = 0; c == 0 && s < agree.size(); ++s) {
      c = compare((*agree[s])[a], (*agree[s])[b]);
    }
    return c;
  };
  std::vector<Index> order(first);
  std::sort(order.begin(), order.end(), [&](Index a, Index b) {
    const int c = place_order(a, b);
    return c < 0 || (c == 0 && a < b);
  });
  // Copies at one place: `place` is the smallest index there (every vertex is its own first).
  std::vector<Index> place(first);
  for (std::size_t i = 1; i < order.size(); ++i) {
    if (place_order(order[i - 1], order[i]) == 0) place[order[i]] = place[order[i - 1]];
  }

  // Only seams are sewn: copies that end border edges running together (two border edges of
  // the input between the same two places). Copies that only meet at a point, or inside the
  // cloth, are where surfaces cross exactly through a vertex: those stay apart, or the crossing
  // would become a joint that no pair test sees.
  struct PolygonEdge {
    Index a, b;  // global input vertices, a < b
  };
  std::vector<PolygonEdge> edges;
  for (std::size_t p = 0; p < pieces.size(); ++p) {
    std::size_t at = 0;
    for (Index size : pieces[p].face_sizes) {
      for (Index k = 0; k < size; ++k) {
        const Index a = piece_begin[p] + pieces[p].face_indices[at + k];
        const Index b = piece_begin[p] + pieces[p].face_indices[at + (k + 1) % size];
        edges.push_back({std::min(a, b), std::max(a, b)});
      }
      at += size;
    }
  }
  auto by_vertices = [](const PolygonEdge& x, const PolygonEdge& y) {
    return x.a < y.a || (x.a == y.a && x.b < y.b);
  };
  std::sort(edges.begin(), edges.end(), by_vertices);
  struct BorderEdge {
    Index low, high;  // the places of its ends, low <= high
    PolygonEdge edge;
  };
  std::vector<BorderEdge> border;
  for (std::size_t i = 0; i < edges.size();) {
    std::size_t j = i + 1;
    while (j < edges.size() && edges[j].a == edges[i].a && edges[j].b == edges[i].b) ++j;
    if (j == i + 1) {  // in one polygon only: a border edge
      const Index pa = place[edges[i].a], pb = place[edges[i].b];
      border.push_back({std::min(pa, pb), std::max(pa, pb), edges[i]});
    }
    i = j;
  }
  std::sort(border.begin(), border.end(), [&](const BorderEdge& x, const BorderEdge& y) {
    return x.low < y.low || (x.low == y.low && (x.high < y.high ||
                                                (x.high == y.high && by_vertices(x.edge, y.edge))));
  });
  std::vector<std::uint8_t> sewn(total, 0);
  for (std::size_t i = 0; i < border.size();) {
    std::size_t j = i + 1;
    while (j < border.size() && border[j].low == border[i].low && border[j].high == border[i].high)
      ++j;
    if (j > i + 1 && border[i].low != border[i].high) {
      for (std::size_t k = i; k < j; ++k) sewn[border[k].edge.a] = sewn[border[k].edge.b] = 1;
    }
    i = j;
  }
  // A sewn copy's first copy is the first sewn one at its place (the order visits a place's
  // copies by index).
  std::vector<Index> first_sewn(total, kNoIndex);
  for (Index v : order) {
    if (!sewn[v]) continue;
    if (first_sewn[place[v]] == kNoIndex) first_sewn[place[v]] = v;
    first[v] = first_sewn[place[v]];
  }
  // A polygon with two copies of one place (a zero-length edge) would lose a corner: that
  // group stays apart.
  std::vector<std::uint8_t> keep_apart(total, 0);
  std::vector<Index> corners;
  for (std::size_t p = 0; p < pieces.size(); ++p) {
    std::size_t at = 0;
    for (Index size : pieces[p].face_sizes) {
      corners.clear();
      for (Index k = 0; k < size; ++k) {
        corners.push_back(first[piece_begin[p] + pieces[p].face_indices[at + k]]);
      }
      at += size;
      std::sort(corners.begin(), corners.end());
      for (std::size_t k = 1; k < corners.size(); ++k) {
        if (corners[k] == corners[k - 1]) keep_apart[corners[k]] = 1;
      }
    }
  }
  for (std::size_t v = 0; v < total; ++v) {
    if (keep_apart[first[v]]) first[v] = static_cast<Index>(v);
  }

  // Input pieces that share a welded vertex are one piece.
  std::vector<Index> parent(pieces.size());
  std::iota(parent.begin(), parent.end(), Index{0});
  for (std::size_t v = 0; v < total; ++v) {
    const Index a = root_of(parent, piece_of[v]), b = root_of(parent, piece_of[first[v]]);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  }
  std::vector<std::vector<Index>> groups;  // input pieces per welded piece, in input order
  std::vector<Index> group_of_root(pieces.size(), kNoIndex);
  for (std::size_t p = 0; p < pieces.size(); ++p) {
    const Index root = root_of(parent, static_cast<Index>(p));
    if (group_of_root[root] == kNoIndex) {
      group_of_root[root] = static_cast<Index>(groups.size());
      groups.emplace_back();
    }
    groups[group_of_root[root]].push_back(static_cast<Index>(p));
  }

  // A copy comes after its first copy (a smaller index, in an earlier or the same input piece
  // of the same group), so the first copy is numbered by then.
  Weld result;
  result.welded_of.assign(total, kNoIndex);
  for (const std::vector<Index>& group : groups) {
    PolygonMesh piece;
    const auto offset = static_cast<Index>(result.first_copy.size());
    for (Index p : group) {
      for (Index v = piece_begin[p]; v < piece_begin[p + 1]; ++v) {
        if (first[v] == v) {
          result.welded_of[v] = static_cast<Index>(result.first_copy.size());
          result.first_copy.push_back(v);
          piece.positions.push_back(input[v]);
        } else {
          result.welded_of[v] = result.welded_of[first[v]];
        }
      }
    }
    for (Index p : group) {
      piece.face_sizes.insert(piece.face_sizes.end(), pieces[p].face_sizes.begin(),
                              pieces[p].face_sizes.end());
      for (Index corner : pieces[p].face_indices) {
        piece.face_indices.push_back(result.welded_of[piece_begin[p] + corner] - offset);
      }
    }
    result.pieces.push_back(std::move(piece));
  }
  return result;
}

}  // namespace untangle

#include "untangle/mesh.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>
#include <string>

#include "parallel_errors.hpp"

namespace untangle {
namespace {

template <typename... Parts>
std::string message(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

// The prefix of every message about piece p; a single piece needs no name.
std::string where(std::size_t piece, std::size_t piece_count) {
  return piece_count > 1 ? message("piece ", piece, ": ") : std::string();
}

void validate_piece(const PolygonMesh& piece, std::size_t p, std::size_t piece_count) {
  const std::string at = where(p, piece_count);
  const std::size_t n = piece.positions.size();
  if (n == 0) throw MeshError(at + "the mesh has no vertices");
  if (piece.face_sizes.empty()) throw MeshError(at + "the mesh has no faces");
  if (n >= kNoIndex) throw MeshError(at + "the mesh has too many vertices");
  for (std::size_t v = 0; v < n; ++v) {
    if (!piece.positions[v].allFinite()) {
      throw MeshError(message(at, "vertex ", v, " has a non-finite coordinate (NaN or Inf)"));
    }
  }
  std::size_t corners = 0;
  for (Index size : piece.face_sizes) corners += size;
  if (corners != piece.face_indices.size()) {
    throw MeshError(message(at, "the face sizes add up to ", corners, " corners, but ",
                            piece.face_indices.size(), " vertex indices were given"));
  }
  std::size_t first = 0;
  std::vector<Index> sorted;
  for (std::size_t f = 0; f < piece.face_sizes.size(); ++f) {
    const Index size = piece.face_sizes[f];
    if (size < 3) throw MeshError(message(at, "face ", f, " has ", size, " corners (at least 3)"));
    sorted.assign(piece.face_indices.begin() + first, piece.face_indices.begin() + first + size);
    for (Index v : sorted) {
      if (v >= n) {
        throw MeshError(
            message(at, "face ", f, " uses vertex ", v, ", but the mesh has ", n, " vertices"));
      }
    }
    std::sort(sorted.begin(), sorted.end());
    auto repeated = std::adjacent_find(sorted.begin(), sorted.end());
    if (repeated != sorted.end()) {
      throw MeshError(message(at, "face ", f, " uses vertex ", *repeated, " more than once"));
    }
    first += size;
  }
}

// Items grouped by row with a counting sort (rows are dense indices), then each short row sorted
// and made unique: the rows of one sort of all pairs, in linear time.
template <class T, class RowOf>
std::vector<Index> by_row(std::size_t rows, const std::vector<T>& items, RowOf row_of,
                          std::vector<T>& grouped) {
  std::vector<Index> begin(rows + 1, 0);
  for (const T& item : items) ++begin[row_of(item) + 1];
  std::partial_sum(begin.begin(), begin.end(), begin.begin());
  std::vector<Index> fill(begin.begin(), begin.end() - 1);
  grouped.resize(items.size());
  for (const T& item : items) grouped[fill[row_of(item)]++] = item;
  return begin;
}

Adjacency make_adjacency(std::size_t rows, const std::vector<std::pair<Index, Index>>& row_item) {
  std::vector<std::pair<Index, Index>> grouped;
  const std::vector<Index> begin = by_row(
      rows, row_item, [](const std::pair<Index, Index>& p) { return p.first; }, grouped);
  Adjacency adjacency;
  adjacency.offsets.assign(rows + 1, 0);
  adjacency.items.reserve(row_item.size());
  for (std::size_t r = 0; r < rows; ++r) {
    const auto first = grouped.begin() + begin[r], last = grouped.begin() + begin[r + 1];
    std::sort(first, last);
    for (auto it = first; it != last; ++it) {
      if (it == first || it->second != (it - 1)->second) adjacency.items.push_back(it->second);
    }
    adjacency.offsets[r + 1] = static_cast<Index>(adjacency.items.size());
  }
  return adjacency;
}

void build_edges(ClothMesh& mesh) {
  struct Corner {
    Index a, b, triangle, slot;
  };
  std::vector<Corner> corners;
  corners.reserve(mesh.triangle_count() * 3);
  for (Index t = 0; t < mesh.triangle_count(); ++t) {
    for (Index k = 0; k < 3; ++k) {
      Index a = mesh.triangles[t][k];
      Index b = mesh.triangles[t][(k + 1) % 3];
      corners.push_back({std::min(a, b), std::max(a, b), t, k});
    }
  }
  // Sorted by (a, b, triangle): grouped by a, then each short group sorted.
  std::vector<Corner> grouped;
  const std::vector<Index> begin = by_row(
      mesh.vertex_count(), corners, [](const Corner& c) { return c.a; }, grouped);
  for (std::size_t v = 0; v < mesh.vertex_count(); ++v) {
    std::sort(grouped.begin() + begin[v], grouped.begin() + begin[v + 1],
              [](const Corner& x, const Corner& y) {
                return std::tie(x.b, x.triangle) < std::tie(y.b, y.triangle);
              });
  }
  corners.swap(grouped);
  mesh.triangle_edges.assign(mesh.triangle_count(), {kNoIndex, kNoIndex, kNoIndex});
  for (std::size_t i = 0; i < corners.size();) {
    MeshEdge edge;
    edge.vertices = {corners[i].a, corners[i].b};
    edge.triangles = {kNoIndex, kNoIndex};
    const Index e = static_cast<Index>(mesh.edges.size());
    std::size_t j = i;
    for (;
         j < corners.size() && corners[j].a == edge.vertices[0] && corners[j].b == edge.vertices[1];
         ++j) {
      if (edge.triangle_count < 2) edge.triangles[edge.triangle_count] = corners[j].triangle;
      ++edge.triangle_count;
      mesh.triangle_edges[corners[j].triangle][corners[j].slot] = e;
    }
    if (edge.triangle_count > 2) ++mesh.report.non_manifold_edges;
    mesh.edges.push_back(edge);
    i = j;
  }
  mesh.edge_is_border.assign(mesh.edges.size(), 0);
  mesh.vertex_is_border.assign(mesh.vertex_count(), 0);
  for (std::size_t e = 0; e < mesh.edges.size(); ++e) {
    if (mesh.edges[e].triangle_count == 1) {
      mesh.edge_is_border[e] = 1;
      mesh.vertex_is_border[mesh.edges[e].vertices[0]] = 1;
      mesh.vertex_is_border[mesh.edges[e].vertices[1]] = 1;
    }
  }
}

// A triangle with the same three vertices as an earlier one would duplicate every hit. This
// depends on the topology only, so it is found once at the build (a sort of all triangles),
// not again for every rest shape a cache sets.
void mark_duplicates(ClothMesh& mesh) {
  mesh.triangle_duplicate.assign(mesh.triangle_count(), 0);
  using Sorted = std::pair<std::array<Index, 3>, Index>;  // sorted corners, triangle
  std::vector<Sorted> sorted_corners;
  sorted_corners.reserve(mesh.triangle_count());
  for (Index t = 0; t < mesh.triangle_count(); ++t) {
    auto corners = mesh.triangles[t];
    std::sort(corners.begin(), corners.end());
    sorted_corners.push_back({corners, t});
  }
  // Grouped by the lowest corner, then each short group sorted.
  std::vector<Sorted> grouped;
  const std::vector<Index> begin = by_row(
      mesh.vertex_count(), sorted_corners, [](const Sorted& s) { return s.first[0]; }, grouped);
  for (std::size_t v = 0; v < mesh.vertex_count(); ++v) {
    std::sort(grouped.begin() + begin[v], grouped.begin() + begin[v + 1]);
    for (Index i = begin[v] + 1; i < begin[v + 1]; ++i) {
      if (grouped[i].first == grouped[i - 1].first) mesh.triangle_duplicate[grouped[i].second] = 1;
    }
  }
}

// Zero-area and repeated triangles would give undefined normals or duplicate every hit: they
// stay in the topology (and bound the BVH) but never take part in detection.
void mark_undetectable(ClothMesh& mesh) {
  mesh.triangle_detectable.assign(mesh.triangle_count(), 1);
  mesh.report.degenerate_triangles = 0;
  mesh.report.duplicate_triangles = 0;
  const auto& x = mesh.rest_positions;
  for (Index t = 0; t < mesh.triangle_count(); ++t) {
    const auto& [a, b, c] = mesh.triangles[t];
    const Vec3 ab = x[b] - x[a], ac = x[c] - x[a], bc = x[c] - x[b];
    const double scale = ab.squaredNorm() + ac.squaredNorm() + bc.squaredNorm();
    // Relative to the squared edge lengths, so the test does not depend on the mesh's units.
    if (!(ab.cross(ac).norm() > 1e-12 * scale)) {
      mesh.triangle_detectable[t] = 0;
      ++mesh.report.degenerate_triangles;
    }
  }
  for (Index t = 0; t < mesh.triangle_count(); ++t) {
    if (!mesh.triangle_duplicate[t]) continue;
    if (mesh.triangle_detectable[t]) ++mesh.report.duplicate_triangles;
    mesh.triangle_detectable[t] = 0;
  }
}

// A quad (or a pair of fan triangles of an n-gon) is one leaf; lone input triangles are paired
// with a lone neighbour across an edge where one is free, so most leaves hold two triangles.
void build_leaves(ClothMesh& mesh) {
  mesh.triangle_leaf.assign(mesh.triangle_count(), kNoIndex);
  auto add_leaf = [&mesh](Index a, Index b) {
    const Index leaf = static_cast<Index>(mesh.leaves.size());
    mesh.leaves.push_back({a, b});
    mesh.triangle_leaf[a] = leaf;
    if (b != kNoIndex) mesh.triangle_leaf[b] = leaf;
  };
  std::vector<std::uint8_t> lone(mesh.triangle_count(), 0);
  for (Index f = 0; f < mesh.polygon_count(); ++f) {
    const Index begin = mesh.polygon_triangle_begin[f], end = mesh.polygon_triangle_begin[f + 1];
    if (end - begin == 1) lone[begin] = 1;
  }
  for (Index f = 0; f < mesh.polygon_count(); ++f) {
    const Index begin = mesh.polygon_triangle_begin[f], end = mesh.polygon_triangle_begin[f + 1];
    if (end - begin == 1) {
      if (mesh.triangle_leaf[begin] != kNoIndex) continue;
      Index partner = kNoIndex;
      for (Index e : mesh.triangle_edges[begin]) {
        const MeshEdge& edge = mesh.edges[e];
        if (edge.triangle_count != 2) continue;
        const Index other = edge.triangles[0] == begin ? edge.triangles[1] : edge.triangles[0];
        if (lone[other] && mesh.triangle_leaf[other] == kNoIndex) {
          partner = other;
          break;
        }
      }
      add_leaf(begin, partner);
      continue;
    }
    // Consecutive fan triangles share the edge (corner 0, corner i + 1).
    for (Index t = begin; t < end; t += 2) add_leaf(t, t + 1 < end ? t + 1 : kNoIndex);
  }
}

// The vertex rows that follow from the edges: neighbours and incident edges.
void build_edge_adjacency(ClothMesh& mesh) {
  const std::size_t n = mesh.vertex_count();
  std::vector<std::pair<Index, Index>> pairs;
  pairs.reserve(mesh.edges.size() * 2);
  for (const MeshEdge& edge : mesh.edges) {
    pairs.push_back({edge.vertices[0], edge.vertices[1]});
    pairs.push_back({edge.vertices[1], edge.vertices[0]});
  }
  mesh.vertex_neighbors = make_adjacency(n, pairs);

  pairs.clear();
  for (Index e = 0; e < mesh.edges.size(); ++e) {
    pairs.push_back({mesh.edges[e].vertices[0], e});
    pairs.push_back({mesh.edges[e].vertices[1], e});
  }
  mesh.vertex_edges = make_adjacency(n, pairs);
}

// The vertex rows that follow from the faces alone: incident triangles and polygon rings. A
// polygon's corners are read back from its fan (corner 0, i, i + 1): corner 0 and 1 of its first
// triangle, then corner 2 of each.
void build_face_adjacency(ClothMesh& mesh) {
  const std::size_t n = mesh.vertex_count();
  std::vector<std::pair<Index, Index>> pairs;
  pairs.reserve(mesh.triangle_count() * 3);
  for (Index t = 0; t < mesh.triangle_count(); ++t) {
    for (Index v : mesh.triangles[t]) pairs.push_back({v, t});
  }
  mesh.vertex_triangles = make_adjacency(n, pairs);

  pairs.clear();
  std::vector<Index> corners;
  for (std::size_t f = 0; f < mesh.polygon_count(); ++f) {
    const Index begin = mesh.polygon_triangle_begin[f], end = mesh.polygon_triangle_begin[f + 1];
    corners.assign({mesh.triangles[begin][0], mesh.triangles[begin][1]});
    for (Index t = begin; t < end; ++t) corners.push_back(mesh.triangles[t][2]);
    for (std::size_t i = 0; i < corners.size(); ++i) {
      for (std::size_t j = 0; j < corners.size(); ++j) {
        if (i != j) pairs.push_back({corners[i], corners[j]});
      }
    }
  }
  mesh.vertex_ring = make_adjacency(n, pairs);
}

}  // namespace

void ClothMesh::validate(std::span<const PolygonMesh> pieces) {
  if (pieces.empty()) throw MeshError("no mesh was given");
  std::size_t total_vertices = 0;
  for (std::size_t p = 0; p < pieces.size(); ++p) {
    validate_piece(pieces[p], p, pieces.size());
    total_vertices += pieces[p].positions.size();
  }
  if (total_vertices >= kNoIndex) throw MeshError("the meshes have too many vertices");
}

ClothMesh ClothMesh::build(std::span<const PolygonMesh> pieces, MeshParts parts) {
  validate(pieces);
  std::size_t total_vertices = 0;
  for (const PolygonMesh& piece : pieces) total_vertices += piece.positions.size();

  ClothMesh mesh;
  mesh.rest_positions.reserve(total_vertices);
  mesh.piece_vertex_begin.push_back(0);
  mesh.piece_triangle_begin.push_back(0);
  mesh.polygon_triangle_begin.push_back(0);
  for (std::size_t p = 0; p < pieces.size(); ++p) {
    const PolygonMesh& piece = pieces[p];
    const Index offset = static_cast<Index>(mesh.rest_positions.size());
    mesh.rest_positions.insert(mesh.rest_positions.end(), piece.positions.begin(),
                               piece.positions.end());
    mesh.vertex_piece.insert(mesh.vertex_piece.end(), piece.positions.size(),
                             static_cast<Index>(p));
    std::size_t first = 0;
    for (Index size : piece.face_sizes) {
      const Index* corner = piece.face_indices.data() + first;
      const Index polygon = static_cast<Index>(mesh.polygon_triangle_begin.size() - 1);
      // A fan from corner 0: exact for quads and convex n-gons, the faces Blender users model.
      for (Index i = 1; i + 1 < size; ++i) {
        mesh.triangles.push_back({offset + corner[0], offset + corner[i], offset + corner[i + 1]});
        mesh.triangle_piece.push_back(static_cast<Index>(p));
        mesh.triangle_polygon.push_back(polygon);
      }
      mesh.polygon_triangle_begin.push_back(static_cast<Index>(mesh.triangles.size()));
      first += size;
    }
    mesh.piece_vertex_begin.push_back(static_cast<Index>(mesh.rest_positions.size()));
    mesh.piece_triangle_begin.push_back(static_cast<Index>(mesh.triangles.size()));
  }

  // Two independent halves, side by side: what follows from the edges, and what from the faces
  // alone. They write disjoint members of the mesh.
  const bool all = parts == MeshParts::kAll;
  ParallelErrors errors;
#pragma omp parallel sections
  {
#pragma omp section
    errors.run([&] {
      build_edges(mesh);
      build_leaves(mesh);
      if (all) build_edge_adjacency(mesh);
    });
#pragma omp section
    errors.run([&] {
      mark_duplicates(mesh);
      if (all) build_face_adjacency(mesh);
    });
  }
  errors.rethrow();
  mesh.set_rest_positions(mesh.rest_positions);
  return mesh;
}

void ClothMesh::build_vertex_adjacency() {
  if (has_vertex_adjacency()) return;
  ParallelErrors errors;
#pragma omp parallel sections
  {
#pragma omp section
    errors.run([&] { build_edge_adjacency(*this); });
#pragma omp section
    errors.run([&] { build_face_adjacency(*this); });
  }
  try {
    errors.rethrow();
  } catch (...) {
    // All four or none: a half-built set would pass has_vertex_adjacency() next time.
    vertex_neighbors = Adjacency();
    vertex_ring = Adjacency();
    vertex_triangles = Adjacency();
    vertex_edges = Adjacency();
    throw;
  }
}

void ClothMesh::set_rest_positions(const Positions& positions) {
  if (positions.size() != vertex_count()) {
    throw MeshError("the rest shape has " + std::to_string(positions.size()) +
                    " positions, but the mesh has " + std::to_string(vertex_count()) + " vertices");
  }
  rest_positions = positions;
  rest_edge_lengths.clear();
  rest_edge_lengths.reserve(edges.size());
  double sum = 0;
  for (const MeshEdge& edge : edges) {
    const double length =
        (rest_positions[edge.vertices[1]] - rest_positions[edge.vertices[0]]).norm();
    rest_edge_lengths.push_back(length);
    sum += length;
  }
  mean_edge_length = edges.empty() ? 0.0 : sum / static_cast<double>(edges.size());
  mark_undetectable(*this);
}

double max_edge_strain(const ClothMesh& mesh, const Positions& reference, const Positions& x,
                       StrainEdges edges) {
  double strain = 0;
  for (const MeshEdge& edge : mesh.edges) {
    if (edges == StrainEdges::kPolygonSides && mesh.edge_is_diagonal(edge)) continue;
    const double before = (reference[edge.vertices[1]] - reference[edge.vertices[0]]).norm();
    if (!(before > 0)) continue;  // a collapsed input edge has no length to keep
    const double after = (x[edge.vertices[1]] - x[edge.vertices[0]]).norm();
    strain = std::max(strain, std::abs(after / before - 1));
  }
  return strain;
}

}  // namespace untangle

// ClothMesh: the immutable topology of one or several cloth pieces (objects, sheets), built once
// from polygon meshes and validated. It owns triangles, edges with their one or two triangles,
// border flags, vertex rings, the quad pairing of BVH leaves (SPEC "BVH") and the rest shape
// (the one part that can be replaced after the build).
#pragma once

#include <array>
#include <span>
#include <stdexcept>
#include <string>

#include "untangle/types.hpp"

namespace untangle {

// One piece as the user gives it: positions and polygons of any size (local vertex indices).
struct PolygonMesh {
  Positions positions;
  std::vector<Index> face_sizes;    // number of corners of each polygon
  std::vector<Index> face_indices;  // corners of all polygons, concatenated
};

// A grid of columns x rows vertices joined by quads: vertex i + j * columns (column i, row j) at
// place(i, j), quad (i, j), (i + 1, j), (i + 1, j + 1), (i, j + 1), so counter-clockwise seen
// from +z when place maps i to +x and j to +y. Used by the scenes, the tests and the benches.
template <typename Place>
PolygonMesh quad_grid(Index columns, Index rows, Place place) {
  PolygonMesh mesh;
  mesh.positions.reserve(static_cast<std::size_t>(columns) * rows);
  for (Index j = 0; j < rows; ++j) {
    for (Index i = 0; i < columns; ++i) mesh.positions.push_back(place(i, j));
  }
  for (Index j = 0; j + 1 < rows; ++j) {
    for (Index i = 0; i + 1 < columns; ++i) {
      const Index v = j * columns + i;
      mesh.face_sizes.push_back(4);
      mesh.face_indices.insert(mesh.face_indices.end(), {v, v + 1, v + columns + 1, v + columns});
    }
  }
  return mesh;
}

// Thrown by ClothMesh::build with a message that names the piece, face and vertex at fault.
class MeshError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct MeshEdge {
  std::array<Index, 2> vertices;   // vertices[0] < vertices[1]
  std::array<Index, 2> triangles;  // kNoIndex where the edge has only one triangle
  Index triangle_count = 0;        // 1 = border, 2 = interior, 3+ = non-manifold
};

// A BVH leaf: a quad (two triangles sharing an edge) or a lone triangle (second = kNoIndex).
using Leaf = std::array<Index, 2>;

// Compressed rows: the items of row i are items[offsets[i] .. offsets[i+1]).
struct Adjacency {
  std::vector<Index> offsets;
  std::vector<Index> items;
  std::span<const Index> operator[](Index i) const {
    return {items.data() + offsets[i], items.data() + offsets[i + 1]};
  }
};

// What ClothMesh::build makes. Detection (the BVH, the narrow phase, the contours) reads the
// triangles, edges, leaves and pieces only; the per-vertex rows (neighbours, rings, incident
// triangles and edges) serve the solver, the responses and the untangler, and cost as much
// again to build: a one-shot detection (ut_detect, the first frame of a world) leaves them out.
enum class MeshParts { kAll, kDetection };

struct MeshReport {
  std::size_t degenerate_triangles = 0;  // zero area: kept out of detection
  std::size_t duplicate_triangles = 0;   // same three vertices as an earlier one: kept out too
  std::size_t non_manifold_edges = 0;    // 3+ triangles: accepted
};

class ClothMesh {
 public:
  // Builds and validates. Vertices of piece p follow those of pieces 0..p-1 in global order.
  // Throws MeshError on: no piece, a piece without vertices or faces, a face with fewer than
  // 3 corners or a repeated corner, an index out of range, a non-finite coordinate.
  static ClothMesh build(std::span<const PolygonMesh> pieces, MeshParts parts = MeshParts::kAll);
  // The checks of build alone (the same MeshError), for code that reads the pieces before a
  // build (the weld).
  static void validate(std::span<const PolygonMesh> pieces);

  // The per-vertex rows a kDetection build leaves out (vertex_neighbors, vertex_ring,
  // vertex_triangles, vertex_edges), the same as a kAll build makes; nothing when they exist.
  void build_vertex_adjacency();
  bool has_vertex_adjacency() const { return !vertex_neighbors.offsets.empty(); }

  // Replaces the rest shape (a cache frame that is its own reference): rest positions, edge
  // lengths and which triangles are degenerate follow it; the topology stays. Throws MeshError
  // when the count is wrong. Positions must be finite (the caller checks them).
  void set_rest_positions(const Positions& positions);

  std::size_t vertex_count() const { return rest_positions.size(); }
  std::size_t triangle_count() const { return triangles.size(); }
  std::size_t piece_count() const { return piece_vertex_begin.size() - 1; }
  std::size_t polygon_count() const { return polygon_triangle_begin.size() - 1; }
  // An edge inside one polygon: a diagonal of its triangulation, not a side the user made.
  bool edge_is_diagonal(const MeshEdge& edge) const {
    return edge.triangle_count == 2 &&
           triangle_polygon[edge.triangles[0]] == triangle_polygon[edge.triangles[1]];
  }

  // The three corners of triangle t; edge k of t joins corners k and (k + 1) % 3.
  std::vector<std::array<Index, 3>> triangles;
  std::vector<std::array<Index, 3>> triangle_edges;
  std::vector<Index> triangle_piece;
  std::vector<Index> triangle_polygon;            // the input polygon (global numbering)
  std::vector<std::uint8_t> triangle_detectable;  // 0 for degenerate and duplicate triangles
  std::vector<std::uint8_t> triangle_duplicate;   // 1: same vertices as an earlier triangle
  std::vector<Index> polygon_triangle_begin;      // triangles of polygon f: [begin[f], begin[f+1])

  std::vector<MeshEdge> edges;
  std::vector<std::uint8_t> edge_is_border;    // exactly one triangle
  std::vector<std::uint8_t> vertex_is_border;  // on a border edge

  std::vector<Index> vertex_piece;
  std::vector<Index> piece_vertex_begin;    // vertices of piece p: [begin[p], begin[p+1])
  std::vector<Index> piece_triangle_begin;  // triangles of piece p: [begin[p], begin[p+1])

  // Empty after a kDetection build until build_vertex_adjacency().
  Adjacency vertex_neighbors;  // vertices sharing an edge
  Adjacency vertex_ring;       // vertices sharing a polygon (the 8 neighbours on a quad grid)
  Adjacency vertex_triangles;  // triangles using the vertex
  Adjacency vertex_edges;      // edges using the vertex

  std::vector<Leaf> leaves;          // BVH leaves, all triangles (detectable or not) once
  std::vector<Index> triangle_leaf;  // the leaf that holds triangle t

  Positions rest_positions;  // the positions given to build
  std::vector<double> rest_edge_lengths;
  double mean_edge_length = 0;  // the "particle spacing" of non-grid meshes

  MeshReport report;
};

// The edges max_edge_strain measures.
enum class StrainEdges {
  // The user's edges: the diagonals that split a polygon into triangles are left out, since a
  // crushed quad of a cloth cache can have a diagonal of almost zero length whose ratio says
  // nothing about the stretch of the cloth. The untangler's figure.
  kPolygonSides,
  // Every edge, the diagonals too: the world's figure per frame (FrameStats::max_edge_strain),
  // against its own rest shape.
  kAll,
};

// The largest |length at x / length at reference - 1| over the mesh's edges of `edges`; an edge
// of no length at the reference has no length to keep and is left out.
double max_edge_strain(const ClothMesh& mesh, const Positions& reference, const Positions& x,
                       StrainEdges edges = StrainEdges::kPolygonSides);

}  // namespace untangle

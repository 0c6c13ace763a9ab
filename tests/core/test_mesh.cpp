// ClothMesh: topology counts checked against closed-form grid formulas, and every validation
// error reported with a message that names the face and vertex at fault.
#include <gtest/gtest.h>

#include <set>

#include "untangle/mesh.hpp"

namespace untangle {
namespace {

// A grid of (columns x rows) particles as quads, in the plane z = 0.
PolygonMesh flat_grid(Index columns, Index rows, double spacing = 1.0) {
  return quad_grid(columns, rows,
                   [spacing](Index i, Index j) { return Vec3(i * spacing, j * spacing, 0); });
}

ClothMesh build_one(const PolygonMesh& piece) {
  return ClothMesh::build(std::span(&piece, 1));
}

std::string build_error(const PolygonMesh& piece) {
  try {
    build_one(piece);
  } catch (const MeshError& error) {
    return error.what();
  }
  return "no error";
}

TEST(ClothMesh, QuadGridTopologyMatchesClosedForm) {
  const Index c = 7, r = 5;
  const ClothMesh mesh = build_one(flat_grid(c, r));
  const std::size_t quads = (c - 1) * (r - 1);
  EXPECT_EQ(mesh.vertex_count(), c * r);
  EXPECT_EQ(mesh.triangle_count(), 2 * quads);
  // Horizontal + vertical + one diagonal per quad.
  EXPECT_EQ(mesh.edges.size(), (c - 1) * r + c * (r - 1) + quads);
  std::size_t border_edges = 0, border_vertices = 0;
  for (auto b : mesh.edge_is_border) border_edges += b;
  for (auto b : mesh.vertex_is_border) border_vertices += b;
  EXPECT_EQ(border_edges, 2 * (c - 1) + 2 * (r - 1));
  EXPECT_EQ(border_vertices, 2 * c + 2 * (r - 2));
  EXPECT_EQ(mesh.leaves.size(), quads);  // one leaf per quad
  for (const Leaf& leaf : mesh.leaves) {
    EXPECT_NE(leaf[1], kNoIndex);
    EXPECT_EQ(mesh.triangle_polygon[leaf[0]], mesh.triangle_polygon[leaf[1]]);
  }
  const Index interior = 2 * c + 3;
  EXPECT_EQ(mesh.vertex_ring[interior].size(), 8u);  // the 8 grid neighbours
  EXPECT_EQ(mesh.report.non_manifold_edges, 0u);
  const double straight = (c - 1) * r + c * (r - 1);
  EXPECT_NEAR(mesh.mean_edge_length, (straight + quads * std::sqrt(2.0)) / (straight + quads),
              1e-12);
}

TEST(ClothMesh, EveryEdgeKnowsItsTriangles) {
  const ClothMesh mesh = build_one(flat_grid(4, 4));
  for (Index t = 0; t < mesh.triangle_count(); ++t) {
    for (Index k = 0; k < 3; ++k) {
      const MeshEdge& edge = mesh.edges[mesh.triangle_edges[t][k]];
      const Index a = mesh.triangles[t][k], b = mesh.triangles[t][(k + 1) % 3];
      EXPECT_EQ(edge.vertices[0], std::min(a, b));
      EXPECT_EQ(edge.vertices[1], std::max(a, b));
      EXPECT_TRUE(edge.triangles[0] == t || edge.triangles[1] == t);
    }
  }
}

TEST(ClothMesh, PiecesAreNumberedInOrder) {
  const std::vector<PolygonMesh> pieces{flat_grid(3, 3), flat_grid(4, 2)};
  const ClothMesh mesh = ClothMesh::build(pieces);
  EXPECT_EQ(mesh.piece_count(), 2u);
  EXPECT_EQ(mesh.piece_vertex_begin, (std::vector<Index>{0, 9, 17}));
  EXPECT_EQ(mesh.vertex_piece[8], 0u);
  EXPECT_EQ(mesh.vertex_piece[9], 1u);
  EXPECT_EQ(mesh.triangles[mesh.piece_triangle_begin[1]][0], 9u);
  for (Index t = 0; t < mesh.triangle_count(); ++t) {
    for (Index v : mesh.triangles[t]) EXPECT_EQ(mesh.vertex_piece[v], mesh.triangle_piece[t]);
  }
}

TEST(ClothMesh, TrianglesArePairedIntoLeavesAcrossEdges) {
  // A quad given as two triangles: one leaf of two.
  PolygonMesh mesh{
      {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(1, 1, 0), Vec3(0, 1, 0)}, {3, 3}, {0, 1, 2, 0, 2, 3}};
  const ClothMesh built = build_one(mesh);
  ASSERT_EQ(built.leaves.size(), 1u);
  EXPECT_EQ(built.leaves[0], (Leaf{0, 1}));
}

TEST(ClothMesh, NgonsAreFannedIntoPairedLeaves) {
  PolygonMesh hexagon;
  for (int i = 0; i < 6; ++i) {
    hexagon.positions.push_back(Vec3(std::cos(i * M_PI / 3), std::sin(i * M_PI / 3), 0));
  }
  hexagon.face_sizes = {6};
  hexagon.face_indices = {0, 1, 2, 3, 4, 5};
  const ClothMesh mesh = build_one(hexagon);
  EXPECT_EQ(mesh.triangle_count(), 4u);
  EXPECT_EQ(mesh.leaves.size(), 2u);
  std::size_t border = 0;
  for (auto b : mesh.edge_is_border) border += b;
  EXPECT_EQ(border, 6u);
}

// A sheared quad: its sides along y stretch by sqrt(1 + s^2) - 1, its diagonal more; the
// polygon sides leave the diagonal out, all edges take it in.
TEST(ClothMesh, MaxEdgeStrainOverPolygonSidesLeavesTheDiagonalOut) {
  const ClothMesh mesh = build_one(flat_grid(2, 2));
  ASSERT_EQ(mesh.edges.size(), 5u);
  constexpr double kShear = 0.5;
  Positions x = mesh.rest_positions;
  for (Vec3& p : x) p.x() += kShear * p.y();
  const double sides = max_edge_strain(mesh, mesh.rest_positions, x);
  EXPECT_NEAR(sides, std::sqrt(1 + kShear * kShear) - 1, 1e-12);
  EXPECT_EQ(max_edge_strain(mesh, mesh.rest_positions, x, StrainEdges::kPolygonSides), sides);
  EXPECT_GT(max_edge_strain(mesh, mesh.rest_positions, x, StrainEdges::kAll), sides + 0.05);
  EXPECT_EQ(max_edge_strain(mesh, mesh.rest_positions, mesh.rest_positions, StrainEdges::kAll), 0);
}

TEST(ClothMesh, RejectsIndexOutOfRange) {
  PolygonMesh mesh = flat_grid(3, 3);
  mesh.face_indices[2] = 20;
  EXPECT_EQ(build_error(mesh), "face 0 uses vertex 20, but the mesh has 9 vertices");
}

TEST(ClothMesh, NamesThePieceWhenThereAreSeveral) {
  std::vector<PolygonMesh> pieces{flat_grid(3, 3), flat_grid(3, 3)};
  pieces[1].face_indices[5] = 9;
  try {
    ClothMesh::build(pieces);
    FAIL();
  } catch (const MeshError& error) {
    EXPECT_STREQ(error.what(), "piece 1: face 1 uses vertex 9, but the mesh has 9 vertices");
  }
}

TEST(ClothMesh, RejectsShortAndRepeatingFaces) {
  PolygonMesh mesh = flat_grid(3, 3);
  mesh.face_indices[1] = mesh.face_indices[0];
  EXPECT_EQ(build_error(mesh), "face 0 uses vertex 0 more than once");
  PolygonMesh two{{Vec3(0, 0, 0), Vec3(1, 0, 0)}, {2}, {0, 1}};
  EXPECT_EQ(build_error(two), "face 0 has 2 corners (at least 3)");
}

TEST(ClothMesh, RejectsNonFiniteCoordinates) {
  PolygonMesh mesh = flat_grid(3, 3);
  mesh.positions[4].y() = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(build_error(mesh), "vertex 4 has a non-finite coordinate (NaN or Inf)");
  mesh.positions[4].y() = std::numeric_limits<double>::infinity();
  EXPECT_EQ(build_error(mesh), "vertex 4 has a non-finite coordinate (NaN or Inf)");
}

TEST(ClothMesh, RejectsEmptyMeshesAndMismatchedCounts) {
  EXPECT_EQ(build_error(PolygonMesh{}), "the mesh has no vertices");
  PolygonMesh no_faces{{Vec3(0, 0, 0)}, {}, {}};
  EXPECT_EQ(build_error(no_faces), "the mesh has no faces");
  PolygonMesh mesh = flat_grid(3, 3);
  mesh.face_indices.pop_back();
  EXPECT_EQ(build_error(mesh),
            "the face sizes add up to 16 corners, but 15 vertex indices were given");
  EXPECT_THROW(ClothMesh::build(std::span<const PolygonMesh>()), MeshError);
}

TEST(ClothMesh, ZeroAreaAndDuplicateTrianglesAreKeptOutOfDetection) {
  PolygonMesh mesh{{Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(2, 0, 0), Vec3(0, 1, 0)},
                   {3, 3, 3},
                   {0, 1, 2, 0, 1, 3, 1, 3, 0}};
  const ClothMesh built = build_one(mesh);
  EXPECT_EQ(built.report.degenerate_triangles, 1u);  // collinear 0, 1, 2
  EXPECT_EQ(built.report.duplicate_triangles, 1u);   // {0, 1, 3} twice
  EXPECT_EQ(built.triangle_detectable, (std::vector<std::uint8_t>{0, 1, 0}));
}

// Degeneracy follows each rest shape (a cache frame), duplicates are topology: a new rest shape
// that makes the collinear triangle proper lets it into detection, the repeated one stays out.
TEST(ClothMesh, NewRestShapeRedecidesDegenerateButKeepsDuplicatesOut) {
  PolygonMesh mesh{{Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(2, 0, 0), Vec3(0, 1, 0)},
                   {3, 3, 3},
                   {0, 1, 2, 0, 1, 3, 1, 3, 0}};
  ClothMesh built = build_one(mesh);
  Positions rest = built.rest_positions;
  rest[2] = Vec3(2, 1, 0);  // 0, 1, 2 no longer collinear
  built.set_rest_positions(rest);
  EXPECT_EQ(built.report.degenerate_triangles, 0u);
  EXPECT_EQ(built.report.duplicate_triangles, 1u);
  EXPECT_EQ(built.triangle_detectable, (std::vector<std::uint8_t>{1, 1, 0}));
  rest[3] = Vec3(0.5, 0, 0);  // now the two triangles on 0, 1, 3 are flat: degenerate first
  built.set_rest_positions(rest);
  EXPECT_EQ(built.report.degenerate_triangles, 2u);
  EXPECT_EQ(built.report.duplicate_triangles, 0u);
  EXPECT_EQ(built.triangle_detectable, (std::vector<std::uint8_t>{1, 0, 0}));
}

TEST(ClothMesh, NonManifoldEdgesAreAcceptedAndCounted) {
  // Three triangles on the edge (0, 1).
  PolygonMesh fan{{Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0, -1, 0), Vec3(0, 0, 1)},
                  {3, 3, 3},
                  {0, 1, 2, 1, 0, 3, 0, 1, 4}};
  const ClothMesh mesh = build_one(fan);
  EXPECT_EQ(mesh.report.non_manifold_edges, 1u);
  EXPECT_EQ(mesh.triangle_count(), 3u);
}

// Two pieces of mixed polygons (quads, a pentagon, lone triangles): every kind of vertex row.
std::vector<PolygonMesh> mixed_pieces() {
  PolygonMesh a = flat_grid(5, 4);
  // A pentagon and two lone triangles hung on the grid's last row (vertices 15-19).
  const Index base = static_cast<Index>(a.positions.size());
  for (int k = 0; k < 4; ++k) a.positions.push_back(Vec3(k, 4.0, 0.1 * k));
  a.face_sizes.insert(a.face_sizes.end(), {5, 3, 3});
  a.face_indices.insert(a.face_indices.end(),
                        {15, 16, base + 1, base + 0, base + 3, 16, 17, base + 1, 17, 18, base + 2});
  PolygonMesh b = flat_grid(3, 3);
  for (Vec3& p : b.positions) p.z() = 5;
  return {a, b};
}

// The vertex rows of the mesh's triangles and polygons, each found by scanning all of them.
struct BruteRows {
  std::vector<std::set<Index>> neighbors, ring, triangles, edges;
};

BruteRows brute_rows(const ClothMesh& mesh, const std::vector<PolygonMesh>& pieces) {
  BruteRows rows;
  const std::size_t n = mesh.vertex_count();
  rows.neighbors.resize(n);
  rows.ring.resize(n);
  rows.triangles.resize(n);
  rows.edges.resize(n);
  for (Index t = 0; t < mesh.triangle_count(); ++t) {
    for (int k = 0; k < 3; ++k) {
      const Index u = mesh.triangles[t][k], v = mesh.triangles[t][(k + 1) % 3];
      rows.triangles[u].insert(t);
      rows.neighbors[u].insert(v);
      rows.neighbors[v].insert(u);
    }
  }
  for (Index e = 0; e < mesh.edges.size(); ++e) {
    for (Index v : mesh.edges[e].vertices) rows.edges[v].insert(e);
  }
  Index offset = 0;
  for (const PolygonMesh& piece : pieces) {
    std::size_t first = 0;
    for (Index size : piece.face_sizes) {
      for (Index i = 0; i < size; ++i) {
        for (Index j = 0; j < size; ++j) {
          if (i != j) {
            rows.ring[offset + piece.face_indices[first + i]].insert(offset +
                                                                     piece.face_indices[first + j]);
          }
        }
      }
      first += size;
    }
    offset += static_cast<Index>(piece.positions.size());
  }
  return rows;
}

void expect_rows(const Adjacency& rows, const std::vector<std::set<Index>>& expected,
                 const char* what) {
  ASSERT_EQ(rows.offsets.size(), expected.size() + 1) << what;
  for (Index v = 0; v < expected.size(); ++v) {
    const auto row = rows[v];
    EXPECT_EQ(std::vector<Index>(row.begin(), row.end()),
              std::vector<Index>(expected[v].begin(), expected[v].end()))
        << what << " of vertex " << v;
  }
}

void expect_brute_rows(const ClothMesh& mesh, const BruteRows& expected) {
  expect_rows(mesh.vertex_neighbors, expected.neighbors, "neighbours");
  expect_rows(mesh.vertex_ring, expected.ring, "ring");
  expect_rows(mesh.vertex_triangles, expected.triangles, "triangles");
  expect_rows(mesh.vertex_edges, expected.edges, "edges");
}

// A detection-only build leaves the vertex rows out and keeps everything detection reads; the
// rows built afterwards are those of a brute-force scan of the triangles and polygons, as are
// a full build's.
TEST(ClothMesh, DetectionBuildLeavesOutVertexRowsAndBuildsThemLater) {
  const std::vector<PolygonMesh> pieces = mixed_pieces();
  const ClothMesh full = ClothMesh::build(pieces);
  ClothMesh detection = ClothMesh::build(pieces, MeshParts::kDetection);
  EXPECT_TRUE(full.has_vertex_adjacency());
  EXPECT_FALSE(detection.has_vertex_adjacency());
  EXPECT_TRUE(detection.vertex_ring.items.empty());
  // The triangles (a fan per polygon) and the edges from a scan of the input polygons.
  std::set<std::array<Index, 2>> polygon_edges;
  std::size_t triangle_count = 0;
  Index offset = 0;
  for (const PolygonMesh& piece : pieces) {
    std::size_t first = 0;
    for (Index size : piece.face_sizes) {
      triangle_count += size - 2;
      for (Index i = 1; i + 1 < size; ++i) {  // the fan's sides and diagonals
        for (Index j : {Index{0}, i, i + 1}) {
          for (Index k : {Index{0}, i, i + 1}) {
            const Index u = offset + piece.face_indices[first + j];
            const Index v = offset + piece.face_indices[first + k];
            if (u < v) polygon_edges.insert({u, v});
          }
        }
      }
      first += size;
    }
    offset += static_cast<Index>(piece.positions.size());
  }
  EXPECT_EQ(detection.triangle_count(), triangle_count);
  std::set<std::array<Index, 2>> edges;
  for (const MeshEdge& e : detection.edges) edges.insert(e.vertices);
  EXPECT_EQ(edges, polygon_edges);
  EXPECT_EQ(detection.edges.size(), polygon_edges.size());
  std::vector<int> in_leaves(detection.triangle_count(), 0);
  for (const Leaf& leaf : detection.leaves) {
    for (Index t : leaf) {
      if (t != kNoIndex) ++in_leaves[t];
    }
  }
  for (int count : in_leaves) EXPECT_EQ(count, 1);

  const BruteRows expected = brute_rows(full, pieces);
  expect_brute_rows(full, expected);
  detection.build_vertex_adjacency();
  EXPECT_TRUE(detection.has_vertex_adjacency());
  expect_brute_rows(detection, expected);
  detection.build_vertex_adjacency();  // a second call changes nothing
  expect_brute_rows(detection, expected);
}

}  // namespace
}  // namespace untangle

// Bvh disk precomputation: which nodes cover a topological disk, and their border loops, against
// hand counts.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "support/crumpled_mesh.hpp"
#include "untangle/bvh.hpp"

namespace untangle {
namespace {

// Disk bookkeeping against hand counts: the root of an nx x ny grid is a disk whose border has
// 2 (nx + ny) edges, all of them border edges of the mesh; a grid with a hole (an annulus) is
// not a disk; neither is a fold where one node holds two separate strips.
TEST(Bvh, DiskRegionsAndBordersMatchHandCounts) {
  {
    const PolygonMesh g = test::grid(12, 7);
    const ClothMesh mesh = ClothMesh::build(std::span(&g, 1));
    const Bvh bvh(mesh, g.positions);
    const Index root = bvh.roots()[0];
    ASSERT_TRUE(bvh.node_is_disk(root));
    const auto border = bvh.node_border_edges(root);
    EXPECT_EQ(border.size(), 2u * (12 + 7));
    for (Index e : border) EXPECT_TRUE(mesh.edge_is_border[e]);
    // Every leaf node (one quad) is a disk with 4 border edges.
    for (std::size_t n = 0; n < bvh.nodes().size(); ++n) {
      if (!bvh.nodes()[n].is_leaf()) continue;
      EXPECT_TRUE(bvh.node_is_disk(static_cast<Index>(n)));
      EXPECT_EQ(bvh.node_border_edges(static_cast<Index>(n)).size(), 4u);
    }
  }
  {
    PolygonMesh annulus = test::grid(9, 9);
    std::vector<Index> sizes, indices;
    for (std::size_t f = 0; f < annulus.face_sizes.size(); ++f) {
      if (f == 4 + 4 * 9) continue;  // the centre quad
      sizes.push_back(4);
      indices.insert(indices.end(), annulus.face_indices.begin() + 4 * f,
                     annulus.face_indices.begin() + 4 * f + 4);
    }
    annulus.face_sizes = sizes;
    annulus.face_indices = indices;
    const ClothMesh mesh = ClothMesh::build(std::span(&annulus, 1));
    const Bvh bvh(mesh, annulus.positions);
    EXPECT_FALSE(bvh.node_is_disk(bvh.roots()[0]));
    EXPECT_FALSE(bvh.nodes()[bvh.roots()[0]].cullable);
  }
}

// The triangles of node n's region: those of the leaves below it.
void region_triangles(const Bvh& bvh, Index n, std::vector<Index>& out) {
  const BvhNode& node = bvh.nodes()[n];
  if (node.is_leaf()) {
    for (Index t : bvh.mesh().leaves[node.leaf]) {
      if (t != kNoIndex) out.push_back(t);
    }
    return;
  }
  region_triangles(bvh, node.left, out);
  region_triangles(bvh, node.right, out);
}

// Node n's region as a brute-force count sees it: a disk is manifold (detectable triangles,
// at most two per edge), has V - E + F = 1 and a border (edges with one triangle of the region)
// that is one loop: every border vertex on two border edges, all of them joined.
bool brute_is_disk(const Bvh& bvh, Index n, std::set<Index>& border) {
  const ClothMesh& mesh = bvh.mesh();
  std::vector<Index> triangles;
  region_triangles(bvh, n, triangles);
  std::set<Index> vertices;
  std::map<Index, int> edge_uses;
  bool manifold = true;
  for (Index t : triangles) {
    manifold = manifold && mesh.triangle_detectable[t];
    for (int k = 0; k < 3; ++k) {
      vertices.insert(mesh.triangles[t][k]);
      const Index e = mesh.triangle_edges[t][k];
      ++edge_uses[e];
      manifold = manifold && mesh.edges[e].triangle_count <= 2;
    }
  }
  border.clear();
  for (const auto& [e, uses] : edge_uses) {
    if (uses == 1) border.insert(e);
  }
  const auto euler = static_cast<long>(vertices.size()) - static_cast<long>(edge_uses.size()) +
                     static_cast<long>(triangles.size());
  if (!manifold || euler != 1 || border.size() < 3) return false;
  std::map<Index, std::vector<Index>> at;  // border vertex -> its border edges
  for (Index e : border) {
    for (Index v : mesh.edges[e].vertices) at[v].push_back(e);
  }
  for (const auto& [v, edges] : at) {
    if (edges.size() != 2) return false;
  }
  // Joined: a walk from one border edge reaches all of them.
  std::set<Index> reached{*border.begin()};
  std::vector<Index> todo{*border.begin()};
  while (!todo.empty()) {
    const Index e = todo.back();
    todo.pop_back();
    for (Index v : mesh.edges[e].vertices) {
      for (Index f : at[v]) {
        if (reached.insert(f).second) todo.push_back(f);
      }
    }
  }
  return reached.size() == border.size();
}

void expect_disks_as_brute_force(const std::vector<PolygonMesh>& pieces) {
  const ClothMesh mesh = ClothMesh::build(pieces);
  const Bvh bvh(mesh, test::concatenated_positions(pieces));
  std::size_t disks = 0;
  for (Index n = 0; n < bvh.nodes().size(); ++n) {
    std::set<Index> border;
    const bool disk = brute_is_disk(bvh, n, border);
    ASSERT_EQ(bvh.node_is_disk(n), disk) << "node " << n;
    if (!disk) {
      EXPECT_TRUE(bvh.node_border_edges(n).empty());
      continue;
    }
    ++disks;
    // The node's border edges are the brute-force border, in the order of the loop: each edge
    // shares a vertex with the next, the last with the first.
    const auto loop = bvh.node_border_edges(n);
    EXPECT_EQ(std::set<Index>(loop.begin(), loop.end()), border) << "node " << n;
    ASSERT_EQ(loop.size(), border.size());
    for (std::size_t k = 0; k < loop.size(); ++k) {
      const auto& a = mesh.edges[loop[k]].vertices;
      const auto& b = mesh.edges[loop[(k + 1) % loop.size()]].vertices;
      EXPECT_TRUE(a[0] == b[0] || a[0] == b[1] || a[1] == b[0] || a[1] == b[1])
          << "node " << n << ", loop edge " << k;
    }
  }
  EXPECT_GT(disks, bvh.nodes().size() / 4);
}

// Every node of trees deep enough to be split among threads (more than 2^6 leaves per piece):
// the disks and their loops are those of a brute-force count of each node's region.
TEST(Bvh, DisksAndLoopsMatchBruteForceOnEveryNode) {
  test::CrumpleOptions options;
  options.nx = 40;
  options.ny = 30;
  expect_disks_as_brute_force(test::crumpled_pieces(options, 2));
  // A grid with holes: regions around a hole are not disks.
  PolygonMesh holed = test::grid(30, 30);
  std::vector<Index> sizes, indices;
  for (std::size_t f = 0; f < holed.face_sizes.size(); ++f) {
    if (f % 97 == 40) continue;
    sizes.push_back(4);
    indices.insert(indices.end(), holed.face_indices.begin() + 4 * static_cast<long>(f),
                   holed.face_indices.begin() + 4 * static_cast<long>(f) + 4);
  }
  holed.face_sizes = sizes;
  holed.face_indices = indices;
  expect_disks_as_brute_force({holed});
  // Many small pieces: trees shallower than the parallel split depth.
  std::vector<PolygonMesh> small;
  for (int k = 0; k < 5; ++k) small.push_back(test::grid(3 + k, 2 + k, 1.0, Vec3(0, 0, k)));
  expect_disks_as_brute_force(small);
}

}  // namespace
}  // namespace untangle

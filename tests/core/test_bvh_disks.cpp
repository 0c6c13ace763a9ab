// Bvh disk precomputation: which nodes cover a topological disk, and their border loops, against
// hand counts.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace untangle

// The parts of each BVH leaf the search tests: its vertices, its detectable triangles, and the
// vertices and edges it owns.
#include "internal.hpp"

namespace untangle {
namespace {

template <std::size_t N>
bool add_unique(std::array<Index, N>& items, int& count, Index item) {
  for (int i = 0; i < count; ++i) {
    if (items[i] == item) return false;
  }
  items[count++] = item;
  return true;
}

void list_detectable_triangles(const ClothMesh& mesh, Index leaf, ProximitySearch::LeafParts& p) {
  p.triangle_count = 0;
  for (Index t : mesh.leaves[leaf]) {
    if (t != kNoIndex && mesh.triangle_detectable[t]) p.triangles[p.triangle_count++] = t;
  }
}

}  // namespace

namespace proximity_detail {

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

}  // namespace proximity_detail

void ProximitySearch::update_detectable_triangles() {
  const ClothMesh& mesh = bvh_->mesh();
  for (std::size_t leaf = 0; leaf < parts_.size(); ++leaf) {
    list_detectable_triangles(mesh, static_cast<Index>(leaf), parts_[leaf]);
  }
}

}  // namespace untangle

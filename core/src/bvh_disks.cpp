// Which BVH nodes cover a topological disk (only those may be culled), and their border loops,
// found once at the build.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <utility>

#include "bvh_internal.hpp"
#include "parallel_errors.hpp"

namespace untangle {

namespace {

// Topological summary of a node's region, combined bottom-up at build time.
struct RegionTopology {
  std::int64_t vertices = 0, edges = 0, faces = 0;
  bool connected = false;
  bool manifold = false;      // every edge has at most two triangles, all triangles detectable
  std::vector<Index> border;  // sorted edge indices with exactly one triangle in the region
};

// Unique vertices of a sorted edge list.
std::vector<Index> border_vertices(const ClothMesh& mesh, const std::vector<Index>& border) {
  std::vector<Index> vertices;
  vertices.reserve(2 * border.size());
  for (Index e : border) {
    vertices.push_back(mesh.edges[e].vertices[0]);
    vertices.push_back(mesh.edges[e].vertices[1]);
  }
  std::sort(vertices.begin(), vertices.end());
  vertices.erase(std::unique(vertices.begin(), vertices.end()), vertices.end());
  return vertices;
}

// One closed loop without repeated vertices: every vertex has two border edges and a walk
// from the first edge visits all of them. If so and `walk` is given, it receives the edges in
// walking order, each with the vertex the walk enters it at.
bool is_single_simple_loop(const ClothMesh& mesh, const std::vector<Index>& border,
                           std::vector<std::pair<Index, Index>>* walk = nullptr) {
  if (border.size() < 3) return false;
  std::vector<std::pair<Index, Index>> incidence;  // (vertex, edge)
  incidence.reserve(2 * border.size());
  for (Index e : border) {
    incidence.emplace_back(mesh.edges[e].vertices[0], e);
    incidence.emplace_back(mesh.edges[e].vertices[1], e);
  }
  std::sort(incidence.begin(), incidence.end());
  for (std::size_t i = 0; i < incidence.size(); i += 2) {
    const bool pair_ok =
        i + 1 < incidence.size() && incidence[i + 1].first == incidence[i].first &&
        (i + 2 >= incidence.size() || incidence[i + 2].first != incidence[i].first);
    if (!pair_ok) return false;
  }
  auto other_edge_at = [&](Index vertex, Index edge) {
    const auto it =
        std::lower_bound(incidence.begin(), incidence.end(), std::make_pair(vertex, Index{0}));
    return it->second == edge ? (it + 1)->second : it->second;
  };
  const Index start_edge = border.front();
  Index edge = start_edge;
  Index vertex = mesh.edges[edge].vertices[1];
  if (walk != nullptr) {
    walk->clear();
    walk->emplace_back(start_edge, mesh.edges[start_edge].vertices[0]);
  }
  std::size_t walked = 0;
  do {
    edge = other_edge_at(vertex, edge);
    if (walk != nullptr && edge != start_edge) walk->emplace_back(edge, vertex);
    const auto& ev = mesh.edges[edge].vertices;
    vertex = ev[0] == vertex ? ev[1] : ev[0];
    ++walked;
  } while (edge != start_edge && walked <= border.size());
  return walked == border.size();
}

}  // namespace

// Triangles of the mesh's closed islands (connected parts without a border edge). A region
// holding a whole closed island next to a disk can still have V - E + F = 1 and one border loop
// (a torus and a disk), so such triangles are kept out of every culled region.
static std::vector<std::uint8_t> closed_island_triangles(const ClothMesh& mesh) {
  std::vector<Index> parent(mesh.triangle_count());
  for (Index t = 0; t < parent.size(); ++t) parent[t] = t;
  auto find = [&parent](Index t) {
    while (parent[t] != t) t = parent[t] = parent[parent[t]];
    return t;
  };
  for (const MeshEdge& e : mesh.edges) {
    for (Index k = 1; k < std::min<Index>(e.triangle_count, 2); ++k) {
      const Index a = find(e.triangles[0]), b = find(e.triangles[k]);
      if (a != b) parent[std::max(a, b)] = std::min(a, b);
    }
  }
  std::vector<std::uint8_t> has_border(mesh.triangle_count(), 0);
  for (const MeshEdge& e : mesh.edges) {
    if (e.triangle_count == 1) has_border[find(e.triangles[0])] = 1;
  }
  std::vector<std::uint8_t> closed(mesh.triangle_count(), 0);
  for (Index t = 0; t < closed.size(); ++t) closed[t] = has_border[find(t)] ? 0 : 1;
  return closed;
}

// Bottom-up: a node's border is the symmetric difference of its children's borders (an edge on
// both is shared, hence interior), V and E follow by inclusion-exclusion over the shared border
// vertices and edges. For a manifold region a vertex in both children lies on both borders, so
// the counts are exact; anything else is marked non-manifold and never culled. With one simple
// border loop and no closed island, V - E + F = 1 leaves exactly one component of genus 0: a
// disk (two parts touching at a corner give a border vertex of degree 4, refused by the loop
// test).
void Bvh::find_disks() {
  const ClothMesh& mesh = *mesh_;
  const std::vector<std::uint8_t> closed = closed_island_triangles(mesh);
  std::vector<RegionTopology> topo(nodes_.size());
  node_is_disk_.assign(nodes_.size(), 0);
  auto compute = [&](Index n) {
    const BvhNode& node = nodes_[n];
    RegionTopology& r = topo[n];
    if (node.is_leaf()) {
      std::vector<Index> edges, vertices;
      r.manifold = true;
      for (Index t : mesh.leaves[node.leaf]) {
        if (t == kNoIndex) continue;
        ++r.faces;
        r.manifold = r.manifold && mesh.triangle_detectable[t] && !closed[t];
        for (Index e : mesh.triangle_edges[t]) {
          edges.push_back(e);
          r.manifold = r.manifold && mesh.edges[e].triangle_count <= 2;
        }
        for (Index v : mesh.triangles[t]) vertices.push_back(v);
      }
      std::sort(edges.begin(), edges.end());
      std::sort(vertices.begin(), vertices.end());
      r.vertices = std::unique(vertices.begin(), vertices.end()) - vertices.begin();
      std::size_t shared = 0;
      for (std::size_t k = 0; k < edges.size(); ++k) {
        const bool twice = (k + 1 < edges.size() && edges[k + 1] == edges[k]) ||
                           (k > 0 && edges[k - 1] == edges[k]);
        if (!twice) r.border.push_back(edges[k]);
        if (k > 0 && edges[k - 1] == edges[k]) ++shared;
      }
      r.edges = static_cast<std::int64_t>(edges.size() - shared);
    } else {
      RegionTopology& a = topo[node.left];
      RegionTopology& b = topo[node.right];
      std::vector<Index> shared_edges;
      std::set_intersection(a.border.begin(), a.border.end(), b.border.begin(), b.border.end(),
                            std::back_inserter(shared_edges));
      std::set_symmetric_difference(a.border.begin(), a.border.end(), b.border.begin(),
                                    b.border.end(), std::back_inserter(r.border));
      const auto va = border_vertices(mesh, a.border);
      const auto vb = border_vertices(mesh, b.border);
      std::vector<Index> shared_vertices;
      std::set_intersection(va.begin(), va.end(), vb.begin(), vb.end(),
                            std::back_inserter(shared_vertices));
      r.faces = a.faces + b.faces;
      r.edges = a.edges + b.edges - static_cast<std::int64_t>(shared_edges.size());
      r.vertices = a.vertices + b.vertices - static_cast<std::int64_t>(shared_vertices.size());
      r.manifold = a.manifold && b.manifold;
      // The children's borders are no longer needed once the parent is done.
      if (!node_is_disk_[node.left]) std::vector<Index>().swap(a.border);
      if (!node_is_disk_[node.right]) std::vector<Index>().swap(b.border);
    }
    const bool disk =
        r.manifold && r.vertices - r.edges + r.faces == 1 && is_single_simple_loop(mesh, r.border);
    node_is_disk_[n] = disk ? 1 : 0;
  };
  ParallelErrors errors;
#pragma omp parallel for schedule(dynamic, 1)
  for (std::size_t i = 0; i < subtree_roots_.size(); ++i) {
    errors.run([&] {
      for (Index n = subtree_end_[subtree_roots_[i]]; n-- > subtree_roots_[i];) compute(n);
    });
  }
  errors.rethrow();
  for (std::size_t i = top_nodes_.size(); i-- > 0;) compute(top_nodes_[i]);

  node_border_edges_.offsets.assign(nodes_.size() + 1, 0);
  for (std::size_t n = 0; n < nodes_.size(); ++n) {
    node_border_edges_.offsets[n + 1] =
        node_border_edges_.offsets[n] +
        (node_is_disk_[n] ? static_cast<Index>(topo[n].border.size()) : Index{0});
  }
  node_border_edges_.items.resize(node_border_edges_.offsets.back());
  border_corners_.resize(node_border_edges_.items.size());
  std::vector<std::pair<Index, Index>> walk;
  for (std::size_t n = 0; n < nodes_.size(); ++n) {
    if (!node_is_disk_[n]) continue;
    is_single_simple_loop(mesh, topo[n].border, &walk);
    for (std::size_t k = 0; k < walk.size(); ++k) {
      const auto [edge, vertex] = walk[k];
      node_border_edges_.items[node_border_edges_.offsets[n] + k] = edge;
      border_corners_[node_border_edges_.offsets[n] + k] = {
          vertex, mesh.edges[edge].vertices[0] == vertex ? std::uint8_t{0} : std::uint8_t{1}};
    }
  }
}

}  // namespace untangle

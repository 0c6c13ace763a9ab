// Which BVH nodes cover a topological disk (only those may be culled), and their border loops,
// found once at the build.
#include <omp.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <utility>

#include "bvh_internal.hpp"
#include "parallel_errors.hpp"

namespace untangle {

namespace {

// Topological summary of a node's region, combined bottom-up at build time.
struct RegionTopology {
  std::int64_t vertices = 0, edges = 0, faces = 0;
  bool manifold = false;      // every edge has at most two triangles, all triangles detectable
  std::vector<Index> border;  // sorted edge indices with exactly one triangle in the region
};

// Per-vertex working memory, one per thread: a vertex's entries count only while its stamp is
// the current one, so nothing is cleared between nodes and no node sorts its border vertices.
struct VertexScratch {
  explicit VertexScratch(std::size_t vertex_count)
      : stamp(vertex_count, 0), degree(vertex_count, 0), edges(vertex_count) {}
  std::uint32_t next() { return ++current; }
  std::vector<std::uint32_t> stamp;
  std::vector<std::uint8_t> degree;
  std::vector<std::array<Index, 2>> edges;  // the first two border edges at the vertex
  std::uint32_t current = 0;
};

// At most six items: an insertion sort (std::sort over a part of a std::array trips GCC 12's
// array-bounds warning).
void sort_few(std::array<Index, 6>& items, std::size_t count) {
  for (std::size_t i = 1; i < count; ++i) {
    for (std::size_t j = i; j > 0 && items[j] < items[j - 1]; --j)
      std::swap(items[j], items[j - 1]);
  }
}

// The distinct vertices of border a that are also on border b.
std::int64_t shared_vertex_count(const ClothMesh& mesh, const std::vector<Index>& a,
                                 const std::vector<Index>& b, VertexScratch& scratch) {
  const std::uint32_t on_a = scratch.next();
  for (Index e : a) {
    for (Index v : mesh.edges[e].vertices) scratch.stamp[v] = on_a;
  }
  const std::uint32_t counted = scratch.next();
  std::int64_t count = 0;
  for (Index e : b) {
    for (Index v : mesh.edges[e].vertices) {
      if (scratch.stamp[v] == on_a) {
        scratch.stamp[v] = counted;
        ++count;
      }
    }
  }
  return count;
}

// One closed loop without repeated vertices: every vertex has two border edges and a walk
// from the first edge visits all of them. If so and `walk` is given, it receives the edges in
// walking order, each with the vertex the walk enters it at.
bool is_single_simple_loop(const ClothMesh& mesh, const std::vector<Index>& border,
                           VertexScratch& scratch,
                           std::vector<std::pair<Index, Index>>* walk = nullptr) {
  if (border.size() < 3) return false;
  const std::uint32_t stamp = scratch.next();
  for (Index e : border) {
    for (Index v : mesh.edges[e].vertices) {
      if (scratch.stamp[v] != stamp) {
        scratch.stamp[v] = stamp;
        scratch.degree[v] = 0;
      }
      if (scratch.degree[v] == 2) return false;
      scratch.edges[v][scratch.degree[v]++] = e;
    }
  }
  for (Index e : border) {
    for (Index v : mesh.edges[e].vertices) {
      if (scratch.degree[v] != 2) return false;
    }
  }
  auto other_edge_at = [&](Index vertex, Index edge) {
    const std::array<Index, 2>& at = scratch.edges[vertex];
    return at[0] == edge ? at[1] : at[0];
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
  auto compute = [&](Index n, VertexScratch& scratch) {
    const BvhNode& node = nodes_[n];
    RegionTopology& r = topo[n];
    if (node.is_leaf()) {
      std::array<Index, 6> edges{}, vertices{};
      std::size_t count = 0;
      r.manifold = true;
      for (Index t : mesh.leaves[node.leaf]) {
        if (t == kNoIndex) continue;
        r.manifold = r.manifold && mesh.triangle_detectable[t] && !closed[t];
        for (int k = 0; k < 3; ++k) {
          const Index e = mesh.triangle_edges[t][k];
          edges[count + k] = e;
          vertices[count + k] = mesh.triangles[t][k];
          r.manifold = r.manifold && mesh.edges[e].triangle_count <= 2;
        }
        count += 3;
      }
      r.faces = static_cast<std::int64_t>(count / 3);
      r.border.reserve(count);
      sort_few(edges, count);
      sort_few(vertices, count);
      r.vertices = std::unique(vertices.begin(), vertices.begin() + count) - vertices.begin();
      std::size_t shared = 0;
      for (std::size_t k = 0; k < count; ++k) {
        const bool twice =
            (k + 1 < count && edges[k + 1] == edges[k]) || (k > 0 && edges[k - 1] == edges[k]);
        if (!twice) r.border.push_back(edges[k]);
        if (k > 0 && edges[k - 1] == edges[k]) ++shared;
      }
      r.edges = static_cast<std::int64_t>(count - shared);
    } else {
      RegionTopology& a = topo[node.left];
      RegionTopology& b = topo[node.right];
      // Symmetric difference of the sorted borders, counting the edges on both.
      r.border.reserve(a.border.size() + b.border.size());
      std::int64_t shared_edges = 0;
      std::size_t i = 0, j = 0;
      while (i < a.border.size() && j < b.border.size()) {
        if (a.border[i] < b.border[j]) {
          r.border.push_back(a.border[i++]);
        } else if (b.border[j] < a.border[i]) {
          r.border.push_back(b.border[j++]);
        } else {
          ++shared_edges;
          ++i;
          ++j;
        }
      }
      r.border.insert(r.border.end(), a.border.begin() + static_cast<std::ptrdiff_t>(i),
                      a.border.end());
      r.border.insert(r.border.end(), b.border.begin() + static_cast<std::ptrdiff_t>(j),
                      b.border.end());
      r.faces = a.faces + b.faces;
      r.edges = a.edges + b.edges - shared_edges;
      r.vertices = a.vertices + b.vertices - shared_vertex_count(mesh, a.border, b.border, scratch);
      r.manifold = a.manifold && b.manifold;
      // The children's borders are no longer needed once the parent is done.
      if (!node_is_disk_[node.left]) std::vector<Index>().swap(a.border);
      if (!node_is_disk_[node.right]) std::vector<Index>().swap(b.border);
    }
    const bool disk = r.manifold && r.vertices - r.edges + r.faces == 1 &&
                      is_single_simple_loop(mesh, r.border, scratch);
    node_is_disk_[n] = disk ? 1 : 0;
  };
  ParallelErrors errors;
#pragma omp parallel
  {
    // Per thread, touched only where a border reaches: the pages of far vertices stay unmapped.
    std::optional<VertexScratch> scratch;
    errors.run([&] { scratch.emplace(mesh.vertex_count()); });
#pragma omp for schedule(dynamic, 1)
    for (std::size_t i = 0; i < subtree_roots_.size(); ++i) {
      errors.run([&] {
        for (Index n = subtree_end_[subtree_roots_[i]]; n-- > subtree_roots_[i];) {
          compute(n, *scratch);
        }
      });
    }
  }
  errors.rethrow();
  VertexScratch scratch(mesh.vertex_count());
  for (std::size_t i = top_nodes_.size(); i-- > 0;) compute(top_nodes_[i], scratch);

  node_border_edges_.offsets.assign(nodes_.size() + 1, 0);
  for (std::size_t n = 0; n < nodes_.size(); ++n) {
    node_border_edges_.offsets[n + 1] =
        node_border_edges_.offsets[n] +
        (node_is_disk_[n] ? static_cast<Index>(topo[n].border.size()) : Index{0});
  }
  node_border_edges_.items.resize(node_border_edges_.offsets.back());
  border_corners_.resize(node_border_edges_.items.size());
  // Each disk's loop in walking order, into its own range: in parallel, as the search above.
  const auto node_count = static_cast<std::ptrdiff_t>(nodes_.size());
#pragma omp parallel
  {
    std::optional<VertexScratch> loop_scratch;
    std::vector<std::pair<Index, Index>> walk;
    errors.run([&] { loop_scratch.emplace(mesh.vertex_count()); });
#pragma omp for schedule(dynamic, 64)
    for (std::ptrdiff_t n = 0; n < node_count; ++n) {
      if (!node_is_disk_[n]) continue;
      errors.run([&] {
        is_single_simple_loop(mesh, topo[n].border, *loop_scratch, &walk);
        for (std::size_t k = 0; k < walk.size(); ++k) {
          const auto [edge, vertex] = walk[k];
          node_border_edges_.items[node_border_edges_.offsets[n] + k] = edge;
          border_corners_[node_border_edges_.offsets[n] + k] = {
              vertex, mesh.edges[edge].vertices[0] == vertex ? std::uint8_t{0} : std::uint8_t{1}};
        }
      });
    }
  }
  errors.rethrow();
}

}  // namespace untangle

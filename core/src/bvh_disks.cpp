// Which BVH nodes cover a topological disk (only those may be culled), and their border loops,
// found once at the build.
#include <omp.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <utility>

#include "bvh_internal.hpp"
#include "parallel_errors.hpp"

namespace untangle {

namespace {

// Topological summary of a node's region, combined bottom-up at build time. Its border (sorted
// edge indices with exactly one triangle in the region) lives in a list beside it.
struct RegionCounts {
  std::int64_t vertices = 0, edges = 0, faces = 0;
  bool manifold = false;  // every edge has at most two triangles, all triangles detectable
};

// The regions of a walk in reverse pre-order (children before their parent, the right subtree
// before the left one): a stack, so the borders of the regions not yet merged are kept end to
// end in one list, each from its entry's offset; nothing is allocated per node.
struct RegionStack {
  struct Entry {
    RegionCounts counts;
    std::size_t offset;
  };
  std::vector<Entry> entries;
  std::vector<Index> borders;
  std::span<const Index> border(std::size_t k) const {
    const std::size_t end = k + 1 < entries.size() ? entries[k + 1].offset : borders.size();
    return {borders.data() + entries[k].offset, borders.data() + end};
  }
};

// A disk's border loop, as it is found: node, and where its edges start in the walk list.
struct DiskLoop {
  Index node;
  std::size_t first, count;
};

// What one walk over a part of the trees finds: its disks' loops, each edge with the vertex the
// loop enters it at.
struct DiskWalks {
  std::vector<DiskLoop> loops;
  std::vector<std::pair<Index, Index>> edges;
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
std::int64_t shared_vertex_count(const ClothMesh& mesh, std::span<const Index> a,
                                 std::span<const Index> b, VertexScratch& scratch) {
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
bool is_single_simple_loop(const ClothMesh& mesh, std::span<const Index> border,
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
// test). Each disk's loop is walked once, when the disk is found.
void Bvh::find_disks() {
  const ClothMesh& mesh = *mesh_;
  const std::vector<std::uint8_t> closed = closed_island_triangles(mesh);
  node_is_disk_.assign(nodes_.size(), 0);
  // Pushes the region of leaf node n.
  auto push_leaf = [&](Index n, RegionStack& stack) {
    std::array<Index, 6> edges{}, vertices{};
    std::size_t count = 0;
    RegionCounts r;
    r.manifold = true;
    for (Index t : mesh.leaves[nodes_[n].leaf]) {
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
    sort_few(edges, count);
    sort_few(vertices, count);
    r.vertices = std::unique(vertices.begin(), vertices.begin() + count) - vertices.begin();
    stack.entries.push_back({r, stack.borders.size()});
    std::size_t shared = 0;
    for (std::size_t k = 0; k < count; ++k) {
      const bool twice =
          (k + 1 < count && edges[k + 1] == edges[k]) || (k > 0 && edges[k - 1] == edges[k]);
      if (!twice) stack.borders.push_back(edges[k]);
      if (k > 0 && edges[k - 1] == edges[k]) ++shared;
    }
    stack.entries.back().counts.edges = static_cast<std::int64_t>(count - shared);
  };
  // Replaces the two regions on top (the children of an inner node) by their union.
  auto merge_top = [&](RegionStack& stack, VertexScratch& scratch) {
    const std::size_t top = stack.entries.size() - 1;
    const std::span<const Index> a = stack.border(top), b = stack.border(top - 1);
    const RegionCounts& ca = stack.entries[top].counts;
    const RegionCounts& cb = stack.entries[top - 1].counts;
    RegionCounts r;
    r.faces = ca.faces + cb.faces;
    r.vertices = ca.vertices + cb.vertices - shared_vertex_count(mesh, a, b, scratch);
    r.manifold = ca.manifold && cb.manifold;
    // The symmetric difference of the sorted borders, after both, then moved down over them.
    const std::size_t out = stack.borders.size();
    std::int64_t shared_edges = 0;
    std::size_t i = 0, j = 0;
    const std::size_t a_size = a.size(), b_size = b.size();
    const std::size_t a_offset = stack.entries[top].offset,
                      b_offset = stack.entries[top - 1].offset;
    stack.borders.reserve(out + a_size + b_size);  // a and b stay valid while writing
    const Index* pa = stack.borders.data() + a_offset;
    const Index* pb = stack.borders.data() + b_offset;
    while (i < a_size && j < b_size) {
      if (pa[i] < pb[j]) {
        stack.borders.push_back(pa[i++]);
      } else if (pb[j] < pa[i]) {
        stack.borders.push_back(pb[j++]);
      } else {
        ++shared_edges;
        ++i;
        ++j;
      }
    }
    stack.borders.insert(stack.borders.end(), pa + i, pa + a_size);
    stack.borders.insert(stack.borders.end(), pb + j, pb + b_size);
    r.edges = ca.edges + cb.edges - shared_edges;
    const std::size_t merged = stack.borders.size() - out;
    std::copy(stack.borders.begin() + static_cast<std::ptrdiff_t>(out), stack.borders.end(),
              stack.borders.begin() + static_cast<std::ptrdiff_t>(b_offset));
    stack.borders.resize(b_offset + merged);
    stack.entries.pop_back();
    stack.entries.back().counts = r;
  };
  // Node n's region is on top of the stack: is it a disk? If so its loop goes to `walks`.
  std::vector<std::pair<Index, Index>> walk;  // (per thread: copied into each parallel region)
  auto classify = [&](Index n, RegionStack& stack, VertexScratch& scratch, DiskWalks& walks,
                      std::vector<std::pair<Index, Index>>& loop) {
    const RegionCounts& r = stack.entries.back().counts;
    const std::span<const Index> border = stack.border(stack.entries.size() - 1);
    const bool disk = r.manifold && r.vertices - r.edges + r.faces == 1 &&
                      is_single_simple_loop(mesh, border, scratch, &loop);
    node_is_disk_[n] = disk ? 1 : 0;
    if (!disk) return;
    walks.loops.push_back({n, walks.edges.size(), loop.size()});
    walks.edges.insert(walks.edges.end(), loop.begin(), loop.end());
  };
  // The subtrees below the split depth in parallel; each leaves its root's region behind.
  std::vector<DiskWalks> subtree_walks(subtree_roots_.size());
  std::vector<RegionCounts> root_counts(subtree_roots_.size());
  std::vector<std::vector<Index>> root_borders(subtree_roots_.size());
  ParallelErrors errors;
#pragma omp parallel firstprivate(walk)
  {
    // Per thread, touched only where a border reaches: the pages of far vertices stay unmapped.
    std::optional<VertexScratch> scratch;
    RegionStack stack;
    errors.run([&] { scratch.emplace(mesh.vertex_count()); });
#pragma omp for schedule(dynamic, 1)
    for (std::size_t i = 0; i < subtree_roots_.size(); ++i) {
      errors.run([&] {
        stack.entries.clear();
        stack.borders.clear();
        for (Index n = subtree_end_[subtree_roots_[i]]; n-- > subtree_roots_[i];) {
          if (nodes_[n].is_leaf()) {
            push_leaf(n, stack);
          } else {
            merge_top(stack, *scratch);
          }
          classify(n, stack, *scratch, subtree_walks[i], walk);
        }
        root_counts[i] = stack.entries.back().counts;
        root_borders[i] = stack.borders;
      });
    }
  }
  errors.rethrow();
  // The nodes above, on one thread: the same walk, a subtree root's region taken as it was left.
  std::unordered_map<Index, std::size_t> split_index;
  split_index.reserve(subtree_roots_.size());
  for (std::size_t i = 0; i < subtree_roots_.size(); ++i) split_index[subtree_roots_[i]] = i;
  std::vector<Index> upper(top_nodes_.size() + subtree_roots_.size());
  std::merge(top_nodes_.begin(), top_nodes_.end(), subtree_roots_.begin(), subtree_roots_.end(),
             upper.begin());
  DiskWalks top_walks;
  {
    VertexScratch scratch(mesh.vertex_count());
    RegionStack stack;
    for (std::size_t k = upper.size(); k-- > 0;) {
      const Index n = upper[k];
      const auto split = split_index.find(n);
      if (split != split_index.end()) {
        stack.entries.push_back({root_counts[split->second], stack.borders.size()});
        const std::vector<Index>& border = root_borders[split->second];
        stack.borders.insert(stack.borders.end(), border.begin(), border.end());
        continue;  // classified with its subtree
      }
      if (nodes_[n].is_leaf()) {
        push_leaf(n, stack);
      } else {
        merge_top(stack, scratch);
      }
      classify(n, stack, scratch, top_walks, walk);
      // A root's region is not needed above it: each piece's tree starts from an empty stack.
      if (nodes_[n].parent == kNoIndex) {
        stack.entries.clear();
        stack.borders.clear();
      }
    }
  }

  node_border_edges_.offsets.assign(nodes_.size() + 1, 0);
  auto count_loops = [&](const DiskWalks& walks) {
    for (const DiskLoop& loop : walks.loops) {
      node_border_edges_.offsets[loop.node + 1] = static_cast<Index>(loop.count);
    }
  };
  for (const DiskWalks& walks : subtree_walks) count_loops(walks);
  count_loops(top_walks);
  for (std::size_t n = 0; n < nodes_.size(); ++n) {
    node_border_edges_.offsets[n + 1] += node_border_edges_.offsets[n];
  }
  node_border_edges_.items.resize(node_border_edges_.offsets.back());
  border_corners_.resize(node_border_edges_.items.size());
  auto place_loops = [&](const DiskWalks& walks) {
    for (const DiskLoop& loop : walks.loops) {
      const Index offset = node_border_edges_.offsets[loop.node];
      for (std::size_t k = 0; k < loop.count; ++k) {
        const auto [edge, vertex] = walks.edges[loop.first + k];
        node_border_edges_.items[offset + k] = edge;
        border_corners_[offset + k] = {
            vertex, mesh.edges[edge].vertices[0] == vertex ? std::uint8_t{0} : std::uint8_t{1}};
      }
    }
  };
  const auto subtrees = static_cast<std::ptrdiff_t>(subtree_walks.size());
#pragma omp parallel for schedule(dynamic, 4)
  for (std::ptrdiff_t i = 0; i < subtrees; ++i) place_loops(subtree_walks[i]);
  place_loops(top_walks);
}

}  // namespace untangle

#include "untangle/bvh.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "parallel_errors.hpp"

namespace untangle {

namespace {

// The self traversal is unrolled into at least this many independent tasks before the parallel
// loop. A constant (not the thread count), so the task list and the output order never depend
// on how many threads run them.
constexpr std::size_t kTargetTasks = 256;

// Refit and the disk precomputation run the subtrees rooted at this depth in parallel (each
// bottom-up, sequentially) and the few nodes above them on one thread: one parallel region per
// pass instead of one per level, which matters on a loaded machine.
constexpr std::size_t kSplitDepth = 6;

void check_positions(const ClothMesh& mesh, const Positions& positions) {
  if (positions.size() != mesh.vertex_count()) {
    throw std::invalid_argument("Bvh: " + std::to_string(positions.size()) +
                                " positions given for a mesh of " +
                                std::to_string(mesh.vertex_count()) + " vertices");
  }
}

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

// Proper or touching intersection of 2D segments (touching counts: the test is conservative).
struct Point2 {
  double x, y;
};
double orient(const Point2& a, const Point2& b, const Point2& c) {
  return (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x);
}
bool on_segment(const Point2& a, const Point2& b, const Point2& p) {
  return std::min(a.x, b.x) <= p.x && p.x <= std::max(a.x, b.x) && std::min(a.y, b.y) <= p.y &&
         p.y <= std::max(a.y, b.y);
}
bool segments_touch(const Point2& a, const Point2& b, const Point2& c, const Point2& d) {
  const double o1 = orient(a, b, c), o2 = orient(a, b, d);
  // c and d strictly on one side of ab (most pairs): only a or b lying on cd is left, and the
  // cheap box test of on_segment goes first.
  if ((o1 > 0 && o2 > 0) || (o1 < 0 && o2 < 0)) {
    return (on_segment(c, d, a) && orient(c, d, a) == 0) ||
           (on_segment(c, d, b) && orient(c, d, b) == 0);
  }
  const double o3 = orient(c, d, a), o4 = orient(c, d, b);
  if (((o1 > 0 && o2 < 0) || (o1 < 0 && o2 > 0)) && ((o3 > 0 && o4 < 0) || (o3 < 0 && o4 > 0))) {
    return true;
  }
  return (o1 == 0 && on_segment(a, b, c)) || (o2 == 0 && on_segment(a, b, d)) ||
         (o3 == 0 && on_segment(c, d, a)) || (o4 == 0 && on_segment(c, d, b));
}

struct Task {
  Index a, b;  // a == b: the self test of node a; else the pair test of nodes a and b
};

class Traversal {
 public:
  Traversal(const std::vector<BvhNode>& nodes, const std::vector<BvhTraversalNode>& packed,
            bool cull)
      : nodes_(nodes), packed_(packed), cull_(cull) {}

  void self(Index n, std::vector<LeafPair>& pairs, std::vector<Index>& culled) const {
    const BvhNode& node = nodes_[n];
    if (node.is_leaf()) return;  // the triangles of one leaf share an edge: never a pair
    if (cull_ && node.cullable) {
      culled.push_back(n);
      return;
    }
    self(node.left, pairs, culled);
    self(node.right, pairs, culled);
    pair(node.left, node.right, pairs);
  }

  void pair(Index a, Index b, std::vector<LeafPair>& pairs) const {
    if (packed_[a].volume.overlaps(packed_[b].volume)) overlapping_pair(a, b, pairs);
  }

  // a and b overlap. The children are tested before descending (a call per overlapping child
  // pair only), the second overlapping child pair by looping: the same order as plain recursion.
  void overlapping_pair(Index a, Index b, std::vector<LeafPair>& pairs) const {
    for (;;) {
      const BvhTraversalNode& na = packed_[a];
      const BvhTraversalNode& nb = packed_[b];
      if (na.is_leaf() && nb.is_leaf()) {
        pairs.push_back({std::min(na.leaf, nb.leaf), std::max(na.leaf, nb.leaf)});
        return;
      }
      Index a1 = a, b1 = b, a2 = a, b2 = b;
      if (descend_first(na, nb)) {
        a1 = na.left;
        a2 = na.right;
      } else {
        b1 = nb.left;
        b2 = nb.right;
      }
      const bool first = packed_[a1].volume.overlaps(packed_[b1].volume);
      const bool second = packed_[a2].volume.overlaps(packed_[b2].volume);
      if (first && second) {
        // Most such pairs are two leaves: pushed here without a call.
        const BvhTraversalNode& n1 = packed_[a1];
        const BvhTraversalNode& m1 = packed_[b1];
        if (n1.is_leaf() && m1.is_leaf()) {
          pairs.push_back({std::min(n1.leaf, m1.leaf), std::max(n1.leaf, m1.leaf)});
        } else {
          overlapping_pair(a1, b1, pairs);
        }
      }
      if (second) {
        a = a2;
        b = b2;
      } else if (first) {
        a = a1;
        b = b1;
      } else {
        return;
      }
    }
  }

  // One level of the recursion as tasks: children tasks go to `out`, finished work to the
  // outputs.
  void expand(const Task& task, std::vector<Task>& out, std::vector<LeafPair>& pairs,
              std::vector<Index>& culled) const {
    if (task.a == task.b) {
      const BvhNode& node = nodes_[task.a];
      if (node.is_leaf()) return;
      if (cull_ && node.cullable) {
        culled.push_back(task.a);
        return;
      }
      out.push_back({node.left, node.left});
      out.push_back({node.right, node.right});
      out.push_back({node.left, node.right});
      return;
    }
    const BvhTraversalNode& na = packed_[task.a];
    const BvhTraversalNode& nb = packed_[task.b];
    if (!na.volume.overlaps(nb.volume)) return;
    if (na.is_leaf() && nb.is_leaf()) {
      pairs.push_back({std::min(na.leaf, nb.leaf), std::max(na.leaf, nb.leaf)});
      return;
    }
    if (descend_first(na, nb)) {
      out.push_back({na.left, task.b});
      out.push_back({na.right, task.b});
    } else {
      out.push_back({task.a, nb.left});
      out.push_back({task.a, nb.right});
    }
  }

  void run(const Task& task, std::vector<LeafPair>& pairs, std::vector<Index>& culled) const {
    if (task.a == task.b) {
      self(task.a, pairs, culled);
    } else {
      pair(task.a, task.b, pairs);
    }
  }

 private:
  // Descend the bigger volume, so both sides shrink at the same pace.
  static bool descend_first(const BvhTraversalNode& a, const BvhTraversalNode& b) {
    if (b.is_leaf()) return true;
    if (a.is_leaf()) return false;
    return a.size >= b.size;
  }

  const std::vector<BvhNode>& nodes_;
  const std::vector<BvhTraversalNode>& packed_;
  bool cull_;
};

}  // namespace

struct Bvh::SweepKey {
  double u_min, u_max;
  Index segment;
};

struct Bvh::BorderScratch {
  std::vector<Point2> points;  // the loop's corners projected, the first repeated at the end
  std::vector<Point2> ends;    // per segment, its two ends in its edge's vertex order
  std::vector<SweepKey> keys;
};

Bvh::Bvh(const ClothMesh& mesh, const Positions& positions) : mesh_(&mesh) {
  check_positions(mesh, positions);
  const std::size_t leaf_count = mesh.leaves.size();
  std::vector<std::array<double, Kdop18::kAxes>> centroids(leaf_count);
  for (std::size_t l = 0; l < leaf_count; ++l) {
    Vec3 sum = Vec3::Zero();
    int corners = 0;
    for (Index t : mesh.leaves[l]) {
      if (t == kNoIndex) continue;
      for (Index v : mesh.triangles[t]) sum += positions[v];
      corners += 3;
    }
    centroids[l] = Kdop18::project(sum / corners);
  }
  std::vector<std::vector<Index>> piece_leaves(mesh.piece_count());
  for (std::size_t l = 0; l < leaf_count; ++l) {
    piece_leaves[mesh.triangle_piece[mesh.leaves[l][0]]].push_back(static_cast<Index>(l));
  }
  nodes_.reserve(2 * leaf_count);
  for (std::size_t p = 0; p < piece_leaves.size(); ++p) {
    auto& ids = piece_leaves[p];
    roots_.push_back(ids.empty() ? kNoIndex
                                 : build_node(ids, 0, ids.size(), kNoIndex, static_cast<Index>(p),
                                              0, centroids));
  }
  leaf_corners_.resize(leaf_count);
  leaf_second_.assign(leaf_count, kLoneTriangle);
  for (std::size_t l = 0; l < leaf_count; ++l) {
    const auto& first = mesh.triangles[mesh.leaves[l][0]];
    std::array<Index, 4>& corners = leaf_corners_[l];
    corners = {first[0], first[1], first[2], first[0]};
    if (mesh.leaves[l][1] == kNoIndex) continue;
    std::size_t count = 3;
    for (Index v : mesh.triangles[mesh.leaves[l][1]]) {
      if (v == first[0] || v == first[1] || v == first[2]) continue;
      if (count == corners.size()) throw std::logic_error("Bvh: a leaf's triangles share no edge");
      corners[count++] = v;
    }
    // The second triangle's corners in its own order, as slots 0-3 of `corners`, 2 bits each.
    std::uint8_t slots = 0;
    const auto& second = mesh.triangles[mesh.leaves[l][1]];
    for (int k = 2; k >= 0; --k) {
      const auto slot = std::find(corners.begin(), corners.end(), second[k]) - corners.begin();
      slots = static_cast<std::uint8_t>((slots << 2) | slot);
    }
    leaf_second_[l] = slots;
  }
  traversal_nodes_.resize(nodes_.size());
  for (std::size_t n = 0; n < nodes_.size(); ++n) {
    traversal_nodes_[n].left = nodes_[n].left;
    traversal_nodes_[n].right = nodes_[n].right;
    traversal_nodes_[n].leaf = nodes_[n].leaf;
  }
  find_disks();
  refit(positions, 0.0);
}

Index Bvh::build_node(std::vector<Index>& leaf_ids, std::size_t begin, std::size_t end,
                      Index parent, Index piece, std::size_t depth,
                      const std::vector<std::array<double, Kdop18::kAxes>>& centroids) {
  const Index index = static_cast<Index>(nodes_.size());
  nodes_.emplace_back();
  subtree_end_.push_back(kNoIndex);  // set once the children are built
  nodes_[index].parent = parent;
  nodes_[index].piece = piece;
  if (depth < kSplitDepth) top_nodes_.push_back(index);
  if (depth == kSplitDepth) subtree_roots_.push_back(index);
  if (end - begin == 1) {
    nodes_[index].leaf = leaf_ids[begin];
    subtree_end_[index] = index + 1;
    return index;
  }
  std::array<double, Kdop18::kAxes> lo, hi;
  lo.fill(std::numeric_limits<double>::infinity());
  hi.fill(-std::numeric_limits<double>::infinity());
  for (std::size_t i = begin; i < end; ++i) {
    const auto& c = centroids[leaf_ids[i]];
    for (int k = 0; k < Kdop18::kAxes; ++k) {
      lo[k] = std::min(lo[k], c[k]);
      hi[k] = std::max(hi[k], c[k]);
    }
  }
  int axis = 0;
  for (int k = 1; k < Kdop18::kAxes; ++k) {
    if (hi[k] - lo[k] > hi[axis] - lo[axis]) axis = k;
  }
  const std::size_t middle = begin + (end - begin) / 2;
  // Ties broken by leaf index: the split is a pure function of the input.
  std::nth_element(leaf_ids.begin() + static_cast<std::ptrdiff_t>(begin),
                   leaf_ids.begin() + static_cast<std::ptrdiff_t>(middle),
                   leaf_ids.begin() + static_cast<std::ptrdiff_t>(end), [&](Index a, Index b) {
                     const double ca = centroids[a][axis], cb = centroids[b][axis];
                     return ca < cb || (ca == cb && a < b);
                   });
  const Index left = build_node(leaf_ids, begin, middle, index, piece, depth + 1, centroids);
  const Index right = build_node(leaf_ids, middle, end, index, piece, depth + 1, centroids);
  nodes_[index].left = left;
  nodes_[index].right = right;
  subtree_end_[index] = static_cast<Index>(nodes_.size());
  return index;
}

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

// Reads the leaf's corners only (its triangles are slots of them): one lookup fewer between the
// node and the positions than through the mesh's leaves and triangles.
void Bvh::refit_leaf(BvhNode& node, const Positions& positions, double inflation) const {
  const std::array<Index, 4>& corners = leaf_corners_[node.leaf];
  const std::uint8_t second = leaf_second_[node.leaf];
  const std::array<const Vec3*, 4> p = {&positions[corners[0]], &positions[corners[1]],
                                        &positions[corners[2]], &positions[corners[3]]};
  // The corners projected on the 9 axes straight into the volume: no empty volume to start
  // from, one pass per corner (a lone triangle's repeated corner changes no bit).
  const auto d0 = Kdop18::project(*p[0]);
  node.volume.min = d0;
  node.volume.max = d0;
  for (std::size_t c = 1; c < p.size(); ++c) node.volume.add(*p[c]);
  if (inflation > 0) node.volume.inflate(inflation);
  // The first triangle is corners 0, 1, 2 in its own order.
  node.cone = NormalCone::from_triangle(*p[0], *p[1], *p[2]);
  if (second != kLoneTriangle) {
    node.cone = NormalCone::of_two(
        node.cone,
        NormalCone::from_triangle(*p[second & 3], *p[(second >> 2) & 3], *p[(second >> 4) & 3]));
  }
}

void Bvh::refit(const Positions& positions, double inflation) {
  check_positions(*mesh_, positions);
  if (!(inflation >= 0) || !std::isfinite(inflation)) {
    throw std::invalid_argument("Bvh::refit: inflation must be finite and >= 0, got " +
                                std::to_string(inflation));
  }
  inflation_ = inflation;
  auto refit_node = [&](Index n) {
    BvhNode& node = nodes_[n];
    Kdop18f& packed = traversal_nodes_[n].volume;
    if (node.is_leaf()) {
      refit_leaf(node, positions, inflation);
      packed = Kdop18f(node.volume);
    } else {
      node.volume.merge(nodes_[node.left].volume, nodes_[node.right].volume);
      // A cone of 90 degrees or more only says "not cullable", and so does every cone that
      // contains it: such parents get any() without the work of a merge.
      const NormalCone& a = nodes_[node.left].cone;
      const NormalCone& b = nodes_[node.right].cone;
      node.cone = a.narrower_than_right_angle() && b.narrower_than_right_angle()
                      ? NormalCone::merge(a, b)
                      : NormalCone::any();
      packed.merge(traversal_nodes_[node.left].volume, traversal_nodes_[node.right].volume);
    }
    traversal_nodes_[n].size = (packed.max[0] - packed.min[0]) + (packed.max[1] - packed.min[1]) +
                               (packed.max[2] - packed.min[2]);
  };
  // Top-down, so a region inside a cullable one inherits the flag without its own border test
  // (a part of a surface that does not intersect itself does not either).
  auto cull_node = [&](Index n, BorderScratch& scratch) {
    BvhNode& node = nodes_[n];
    if (node.parent != kNoIndex && nodes_[node.parent].cullable) {
      node.cullable = true;
    } else if (node.is_leaf()) {
      node.cullable = false;  // never self-tested (its triangles share an edge): no border test
    } else {
      node.cullable = node_is_disk_[n] && node.cone.narrower_than_right_angle() &&
                      border_is_simple_in_projection(n, positions, scratch);
    }
  };
#pragma omp parallel for schedule(dynamic, 1)
  for (std::size_t i = 0; i < subtree_roots_.size(); ++i) {
    for (Index n = subtree_end_[subtree_roots_[i]]; n-- > subtree_roots_[i];) refit_node(n);
  }
  for (std::size_t i = top_nodes_.size(); i-- > 0;) refit_node(top_nodes_[i]);
  BorderScratch scratch;  // reused across the nodes of one thread's loop
  for (Index n : top_nodes_) cull_node(n, scratch);
  ParallelErrors errors;  // the border tests grow their scratch lists
#pragma omp parallel for schedule(dynamic, 1)
  for (std::size_t i = 0; i < subtree_roots_.size(); ++i) {
    errors.run([&] {
      BorderScratch subtree_scratch;
      for (Index n = subtree_roots_[i]; n < subtree_end_[subtree_roots_[i]]; ++n) {
        cull_node(n, subtree_scratch);
      }
    });
  }
  errors.rethrow();
}

// The border loop projected on the plane normal to the cone axis must not cross or touch
// itself. Sweep over the segments sorted by their smallest u: only segments whose u ranges
// overlap are compared (the same pairs whatever the order of equal u, so the answer does not
// depend on it). The projection basis is turned by a generic angle, so the straight borders of
// grids do not line up with u (that would make every pair overlap in u). Each corner of the
// loop is projected once; segment k joins corners k and k + 1, its ends kept in its edge's own
// vertex order, so every orientation is computed as a test per edge computes it.
bool Bvh::border_is_simple_in_projection(Index n, const Positions& positions,
                                         BorderScratch& scratch) const {
  const Index offset = node_border_edges_.offsets[n];
  const auto count = static_cast<Index>(node_border_edges_.offsets[n + 1] - offset);
  const BorderCorner* corners = border_corners_.data() + offset;
  const Vec3& axis = nodes_[n].cone.axis;
  Vec3 u = Vec3(0.5773502691896258, 0.6215917910601614, 0.5297590554736018).cross(axis);
  if (u.squaredNorm() < 1e-6)
    u = Vec3(0.8110771634476468, -0.3522345137562497, 0.4669118823567).cross(axis);
  u.normalize();
  const Vec3 v = axis.cross(u);
  std::vector<Point2>& points = scratch.points;
  std::vector<Point2>& ends = scratch.ends;
  std::vector<SweepKey>& keys = scratch.keys;
  points.resize(count + 1);
  ends.resize(2 * count);
  keys.resize(count);
  for (Index k = 0; k < count; ++k) {
    const Vec3& p = positions[corners[k].vertex];
    points[k] = {p.dot(u), p.dot(v)};
  }
  points[count] = points[0];
  for (Index k = 0; k < count; ++k) {
    const bool reversed = corners[k].reversed != 0;
    const Point2& a = points[k + (reversed ? 1 : 0)];
    const Point2& b = points[k + (reversed ? 0 : 1)];
    ends[2 * k] = a;
    ends[2 * k + 1] = b;
    keys[k] = {std::min(a.x, b.x), std::max(a.x, b.x), k};
  }
  std::sort(keys.begin(), keys.end(),
            [](const SweepKey& x, const SweepKey& y) { return x.u_min < y.u_min; });
  for (Index i = 0; i < count; ++i) {
    const SweepKey& key = keys[i];
    for (Index j = i + 1; j < count && keys[j].u_min <= key.u_max; ++j) {
      Index s = key.segment, r = keys[j].segment;
      if (r + 1 == s || (s == 0 && r + 1 == count)) std::swap(s, r);
      const Point2 &sa = ends[2 * s], &sb = ends[2 * s + 1];
      const Point2 &ra = ends[2 * r], &rb = ends[2 * r + 1];
      // On a simple loop only neighbours share a vertex; here r starts where s ends.
      if (r == s + 1 || (r == 0 && s + 1 == count)) {
        // Neighbours on the loop meet at their common vertex; they must not fold back onto
        // each other (the far end of one lying on the other).
        const Point2& far_s = points[s];
        const Point2& far_r = points[r + 1];
        if ((on_segment(sa, sb, far_r) && orient(sa, sb, far_r) == 0) ||
            (on_segment(ra, rb, far_s) && orient(ra, rb, far_s) == 0)) {
          return false;
        }
        continue;
      }
      if (segments_touch(sa, sb, ra, rb)) return false;
    }
  }
  return true;
}

Candidates Bvh::find_candidates(bool cull) const {
  Candidates result;
  CandidateBuffers buffers;
  find_candidates(cull, result, buffers);
  return result;
}

void Bvh::find_candidates(bool cull, Candidates& result, CandidateBuffers& buffers) const {
  const Traversal traversal(nodes_, traversal_nodes_, cull);
  // List 0 holds what the unrolling below finds itself, list i + 1 what task i finds.
  auto& pairs = buffers.pairs;
  auto& culled = buffers.culled;
  pairs.resize(std::max<std::size_t>(pairs.size(), 1));
  culled.resize(std::max<std::size_t>(culled.size(), 1));
  pairs[0].clear();
  culled[0].clear();
  std::vector<Task> tasks;
  for (Index root : roots_) {
    if (root != kNoIndex) tasks.push_back({root, root});
  }
  for (std::size_t p = 0; p < roots_.size(); ++p) {
    for (std::size_t q = p + 1; q < roots_.size(); ++q) {
      if (roots_[p] != kNoIndex && roots_[q] != kNoIndex) tasks.push_back({roots_[p], roots_[q]});
    }
  }
  // Breadth-first unrolling, sequential and independent of the thread count. Every expansion
  // finishes a task or replaces it by its children, so this ends on a finite tree.
  while (!tasks.empty() && tasks.size() < kTargetTasks) {
    std::vector<Task> next;
    next.reserve(3 * tasks.size());
    for (const Task& task : tasks) traversal.expand(task, next, pairs[0], culled[0]);
    tasks = std::move(next);
  }
  const std::size_t lists = tasks.size() + 1;
  pairs.resize(lists);
  culled.resize(lists);
  ParallelErrors errors;
#pragma omp parallel for schedule(dynamic, 1)
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    errors.run([&] {
      pairs[i + 1].clear();
      culled[i + 1].clear();
      traversal.run(tasks[i], pairs[i + 1], culled[i + 1]);
    });
  }
  errors.rethrow();
  // Concatenated in list order, each list copied by its own thread. The caller's vectors are
  // reused: a resize to about last frame's size writes little, where fresh ones would be
  // written (and faulted in) whole, on one thread.
  std::vector<std::size_t> pair_offset(lists + 1, 0), culled_offset(lists + 1, 0);
  for (std::size_t i = 0; i < lists; ++i) {
    pair_offset[i + 1] = pair_offset[i] + pairs[i].size();
    culled_offset[i + 1] = culled_offset[i] + culled[i].size();
  }
  result.leaf_pairs.resize(pair_offset.back());
  result.culled_nodes.resize(culled_offset.back());
#pragma omp parallel for schedule(dynamic, 1)
  for (std::size_t i = 0; i < lists; ++i) {
    std::copy(pairs[i].begin(), pairs[i].end(),
              result.leaf_pairs.begin() + static_cast<std::ptrdiff_t>(pair_offset[i]));
    std::copy(culled[i].begin(), culled[i].end(),
              result.culled_nodes.begin() + static_cast<std::ptrdiff_t>(culled_offset[i]));
  }
}

}  // namespace untangle

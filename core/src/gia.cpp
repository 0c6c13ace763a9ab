#include "untangle/gia.hpp"

#include <omp.h>

#include <algorithm>
#include <numeric>

#include "parallel_errors.hpp"

namespace untangle {
namespace {

// Scratch memory of one thread, reused from contour to contour. Vertices and edges are marked
// with the number of the side being analysed, so nothing is cleared between sides.
struct Scratch {
  std::vector<std::uint32_t> vertex_stamp, edge_stamp;
  std::vector<Index> owner;            // the component that reached a vertex first
  std::vector<std::uint8_t> edge_odd;  // the edge is cut an odd number of times (this side)
  std::vector<Index> cut_edges, cut_hits, visited;
  std::vector<std::uint8_t> cut_side;  // per cut edge: the contour side it lies on
  std::vector<std::uint8_t> blocked;   // pinch vertices of the contour: no part grows through
  std::vector<std::uint8_t> label;     // split of a pinched region: the side that reached it
  std::vector<Index> split_queue;
  // The crease closure's shortest-path search (its own stamp: it runs between two floods).
  std::vector<std::uint32_t> crease_stamp;
  std::vector<double> crease_distance;
  std::vector<std::uint32_t> crease_target;
  std::vector<Index> crease_previous;
  std::vector<Index> closure;  // the vertices of the closure found for the current contour
  std::uint32_t crease_round = 0;
  std::vector<Index> parent;              // union-find over components
  std::vector<std::vector<Index>> queue;  // per component root: its frontier
  std::vector<std::size_t> head, size;    // per component root
  std::vector<std::uint8_t> complete, too_big;
  std::vector<Index> active, next_active;
  std::vector<std::uint32_t> round_seen;  // per component: the last round it was listed in
  std::uint32_t stamp = 0, round = 0;
};

Index find(std::vector<Index>& parent, Index c) {
  while (parent[c] != c) {
    parent[c] = parent[parent[c]];
    c = parent[c];
  }
  return c;
}

Vec3 unit_normal(const ClothMesh& mesh, const Positions& x, Index t) {
  const auto& [a, b, c] = mesh.triangles[t];
  const Vec3 n = (x[b] - x[a]).cross(x[c] - x[a]);
  const double length = n.norm();
  return length > 0 ? Vec3(n / length) : Vec3::Zero();
}

// Cut edges: the edges of the sides in `sides` (bit 0: side 0, bit 1: side 1) that pierce the
// other side, an odd number of times, each with its side and one of its hits. Stamps a new round.
void collect_cuts(const Intersections& intersections, const Contour& contour, unsigned sides,
                  Scratch& s) {
  ++s.stamp;
  s.cut_edges.clear();
  s.cut_hits.clear();
  s.cut_side.clear();
  for (std::size_t k = 0; k < contour.hits.size(); ++k) {
    const int side = contour.hit_edge_on_side0[k] != 0 ? 0 : 1;
    if ((sides & (1u << side)) == 0) continue;
    const Index h = contour.hits[k];
    const Index e = intersections.hits[h].edge;
    if (s.edge_stamp[e] != s.stamp) {
      s.edge_stamp[e] = s.stamp;
      s.edge_odd[e] = 0;
      s.cut_edges.push_back(e);
      s.cut_hits.push_back(h);
      s.cut_side.push_back(static_cast<std::uint8_t>(side));
    }
    s.edge_odd[e] ^= 1;
  }
}

// The region the cut edges of collect_cuts bound: the parts they split the piece into, grown
// from both ends of every cut edge at once, one vertex per part in turn, so the work is about
// the size of the parts other than the largest. The parts that complete while another is still
// growing are the region; when all complete (a piece split in two), all but the largest.
// Vertices marked in s.blocked belong to no part and no part grows through them.
void flood_region(const ClothMesh& mesh, const GiaOptions& options, Scratch& s,
                  std::vector<Index>& region) {
  region.clear();
  const std::uint32_t stamp = s.stamp;
  if (s.cut_edges.empty()) return;
  // One component per seed vertex (both ends of each cut edge).
  s.parent.clear();
  s.queue.resize(std::max(s.queue.size(), 2 * s.cut_edges.size()));
  s.head.clear();
  s.size.clear();
  s.complete.clear();
  s.too_big.clear();
  s.round_seen.clear();
  s.round = 0;
  s.active.clear();
  s.visited.clear();
  auto is_cut = [&](Index e) { return s.edge_stamp[e] == stamp && s.edge_odd[e]; };
  for (Index e : s.cut_edges) {
    if (!s.edge_odd[e]) continue;
    for (Index v : mesh.edges[e].vertices) {
      if (s.vertex_stamp[v] == stamp || s.blocked[v]) continue;
      s.vertex_stamp[v] = stamp;
      const Index c = static_cast<Index>(s.parent.size());
      s.owner[v] = c;
      s.parent.push_back(c);
      s.queue[c].assign(1, v);
      s.head.push_back(0);
      s.size.push_back(1);
      s.complete.push_back(0);
      s.too_big.push_back(0);
      s.round_seen.push_back(0);
      s.active.push_back(c);
      s.visited.push_back(v);
    }
  }
  if (s.parent.empty()) return;

  while (s.active.size() > 1) {
    s.next_active.clear();
    for (Index c : s.active) {
      if (find(s.parent, c) != c) continue;  // merged into another this round
      if (s.head[c] == s.queue[c].size()) {
        s.complete[c] = 1;
        continue;
      }
      const Index v = s.queue[c][s.head[c]++];
      Index root = c;
      for (Index e : mesh.vertex_edges[v]) {
        if (is_cut(e)) continue;
        const MeshEdge& edge = mesh.edges[e];
        const Index u = edge.vertices[0] == v ? edge.vertices[1] : edge.vertices[0];
        if (s.blocked[u]) continue;
        if (s.vertex_stamp[u] != stamp) {
          s.vertex_stamp[u] = stamp;
          s.owner[u] = root;
          s.queue[root].push_back(u);
          ++s.size[root];
          s.visited.push_back(u);
          continue;
        }
        const Index other = find(s.parent, s.owner[u]);
        if (other == root) continue;
        // Two seeds of one part met: the smaller's frontier goes to the larger.
        Index keep = root, drop = other;
        if (s.size[drop] > s.size[keep]) std::swap(keep, drop);
        const std::vector<Index>& from = s.queue[drop];
        s.queue[keep].insert(s.queue[keep].end(),
                             from.begin() + static_cast<std::ptrdiff_t>(s.head[drop]), from.end());
        s.size[keep] += s.size[drop];
        s.too_big[keep] = s.too_big[keep] || s.too_big[drop];
        s.parent[drop] = keep;
        root = keep;
      }
      if (s.size[root] > options.max_region_vertices) s.too_big[root] = 1;
      if (!s.too_big[root]) s.next_active.push_back(root);
    }
    // Each root once, in first-seen order (deterministic).
    s.active.clear();
    ++s.round;
    for (Index c : s.next_active) {
      const Index root = find(s.parent, c);
      if (s.complete[root] || s.too_big[root] || s.round_seen[root] == s.round) continue;
      s.round_seen[root] = s.round;
      s.active.push_back(root);
    }
  }
  // The one still growing (or too big) is the outside. When every part completed, the largest
  // is (ties: the first).
  Index outside = kNoIndex;
  if (s.active.size() == 1) {
    outside = s.active[0];
  } else {
    std::size_t largest = 0;
    for (Index c = 0; c < s.parent.size(); ++c) {
      if (find(s.parent, c) != c) continue;
      if (s.too_big[c]) {
        outside = kNoIndex;
        largest = SIZE_MAX;
        break;
      }
      if (s.size[c] > largest) {
        largest = s.size[c];
        outside = c;
      }
    }
  }
  for (Index v : s.visited) {
    const Index c = find(s.parent, s.owner[v]);
    if (c != outside && s.complete[c] && !s.too_big[c]) region.push_back(v);
  }
  std::sort(region.begin(), region.end());
}

// The way back of a region through the other side, from the cut edges of `side` that leave it,
// and its depth: how far it reaches beyond the mean crossing point, against the way back.
void way_back(const ClothMesh& mesh, const Positions& x, const Intersections& intersections,
              const Scratch& s, int side, const std::vector<Index>& region, Vec3& back_through,
              double& depth) {
  back_through = Vec3::Zero();
  depth = 0;
  if (region.empty()) return;
  Vec3 crossing_sum = Vec3::Zero();
  std::size_t crossings = 0;
  for (std::size_t k = 0; k < s.cut_edges.size(); ++k) {
    const Index e = s.cut_edges[k];
    if (!s.edge_odd[e] || s.cut_side[k] != side) continue;
    const auto& [a, b] = mesh.edges[e].vertices;
    const bool a_in = std::binary_search(region.begin(), region.end(), a);
    const bool b_in = std::binary_search(region.begin(), region.end(), b);
    if (a_in == b_in) continue;
    const Vec3 n = unit_normal(mesh, x, intersections.hits[s.cut_hits[k]].triangle);
    const Vec3 out_minus_in = a_in ? Vec3(x[b] - x[a]) : Vec3(x[a] - x[b]);
    back_through += out_minus_in.dot(n) * n;
    crossing_sum += intersections.hits[s.cut_hits[k]].point;
    ++crossings;
  }
  const double length = back_through.norm();
  if (crossings == 0 || !(length > 0)) return;
  const Vec3 way = back_through / length;
  const Vec3 crossing = crossing_sum / static_cast<double>(crossings);
  for (Index v : region) depth = std::max(depth, (crossing - x[v]).dot(way));
}

// The vertices the triangle crossed at an open contour's end shares with the triangle the curve
// would run into next, across the end hit's edge (which the narrow phase skips as adjacent to
// it): one at a pinched fan, two where the curve runs into a fold between two neighbours.
// Empty at a border end, or where the next triangle is not adjacent (the curve ended otherwise).
std::vector<Index> shared_at_end(const ClothMesh& mesh, const Intersections& intersections,
                                 const Contour& contour, bool last) {
  const Hit& hit = intersections.hits[last ? contour.hits.back() : contour.hits.front()];
  const Segment& end =
      intersections.segments[last ? contour.segments.back() : contour.segments.front()];
  const MeshEdge& edge = mesh.edges[hit.edge];
  std::vector<Index> shared;
  if (edge.triangle_count != 2) return shared;
  Index next = kNoIndex;
  for (Index t : edge.triangles) {
    if (t != end.triangles[0] && t != end.triangles[1]) next = t;
  }
  if (next == kNoIndex) return shared;
  for (Index u : mesh.triangles[next]) {
    for (Index w : mesh.triangles[hit.triangle]) {
      if (u == w) shared.push_back(u);
    }
  }
  return shared;
}

// Cosine of the angle between the two triangles' normals at an interior edge, oriented alike
// (1: flat, -1: folded flat onto itself); 1 for a border or non-manifold edge.
double fold_cosine(const ClothMesh& mesh, const Positions& x, Index e) {
  const MeshEdge& edge = mesh.edges[e];
  if (edge.triangle_count != 2) return 1;
  auto runs_forward = [&](Index t) {
    const auto& corners = mesh.triangles[t];
    for (int i = 0; i < 3; ++i) {
      if (corners[i] == edge.vertices[0] && corners[(i + 1) % 3] == edge.vertices[1]) return true;
    }
    return false;
  };
  const Vec3 n0 = unit_normal(mesh, x, edge.triangles[0]);
  Vec3 n1 = unit_normal(mesh, x, edge.triangles[1]);
  if (runs_forward(edge.triangles[0]) == runs_forward(edge.triangles[1])) n1 = -n1;
  return n0.dot(n1);
}

// A contour that ends inside the cloth is closed along the fold it runs into. Two layers joined
// by a fold meet along its crease, so where a crossing curve runs into the fold (the narrow
// phase skips the triangles there, as adjacent) the layers go on touching along the crease: the
// curve and the crease together are the line between the part of a layer that went through and
// the rest. The closure is the path along which the cloth is most folded: each edge costs its
// length times (1 + cos) / 2 of its fold, nothing along a fold pressed flat, its whole length
// across flat cloth, so the path follows the crease where there is one and bridges where it
// fades. It runs to where the curve closes into a cut: from a curve's inner end to the border
// loop its other end is on (a path to another border loop, the other rim of a tube, cuts
// nothing off), or from one inner end to the other.

// The cheapest such path from `sources` to a vertex marked with the current round in
// s.crease_target (Dijkstra, ties by vertex number), as its vertices in s.closure; false when
// none is reached within `limit` vertices.
bool fold_path(const ClothMesh& mesh, const Positions& x, const std::vector<Index>& sources,
               std::size_t limit, Scratch& s) {
  s.closure.clear();
  const std::uint32_t round = s.crease_round;
  using Entry = std::pair<double, Index>;
  std::vector<Entry> heap;
  auto later = [](const Entry& a, const Entry& b) { return a > b; };
  for (Index a : sources) {
    if (s.crease_stamp[a] == round) continue;
    s.crease_stamp[a] = round;
    s.crease_distance[a] = 0;
    s.crease_previous[a] = kNoIndex;
    heap.emplace_back(0.0, a);
  }
  std::make_heap(heap.begin(), heap.end(), later);
  std::size_t settled = 0;
  while (!heap.empty() && settled < limit) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const auto [cost, v] = heap.back();
    heap.pop_back();
    if (cost > s.crease_distance[v]) continue;  // a stale entry
    ++settled;
    if (s.crease_target[v] == round) {
      for (Index u = v; u != kNoIndex; u = s.crease_previous[u]) s.closure.push_back(u);
      return true;
    }
    for (Index e : mesh.vertex_edges[v]) {
      const MeshEdge& edge = mesh.edges[e];
      const Index u = edge.vertices[0] == v ? edge.vertices[1] : edge.vertices[0];
      const double through =
          cost + (x[u] - x[v]).norm() * 0.5 * (1 + std::clamp(fold_cosine(mesh, x, e), -1.0, 1.0));
      if (s.crease_stamp[u] == round && !(through < s.crease_distance[u])) continue;
      s.crease_stamp[u] = round;
      s.crease_distance[u] = through;
      s.crease_previous[u] = v;
      heap.emplace_back(through, u);
      std::push_heap(heap.begin(), heap.end(), later);
    }
  }
  return false;
}

// The closure of an open contour along its fold (above), in s.closure; false when the contour
// has no inner end at a fold, or both its ends are on the border. `shared`: shared_at_end of its
// first and last end.
bool close_along_fold(const ClothMesh& mesh, const Positions& x, const Intersections& intersections,
                      const Contour& contour, const std::array<std::vector<Index>, 2>& shared,
                      std::size_t limit, Scratch& s) {
  s.closure.clear();
  std::array<Index, 2> border_edge{kNoIndex, kNoIndex};
  for (int end = 0; end < 2; ++end) {
    const Index e = intersections.hits[end == 1 ? contour.hits.back() : contour.hits.front()].edge;
    if (mesh.edges[e].triangle_count == 1) border_edge[end] = e;
  }
  const std::uint32_t round = ++s.crease_round;
  std::vector<Index> sources;
  if (border_edge[0] != kNoIndex || border_edge[1] != kNoIndex) {
    const int inner = border_edge[0] != kNoIndex ? 1 : 0;
    if (border_edge[inner] != kNoIndex || shared[inner].empty()) return false;
    // The border loop of the other end, along border edges.
    std::vector<Index> loop(mesh.edges[border_edge[1 - inner]].vertices.begin(),
                            mesh.edges[border_edge[1 - inner]].vertices.end());
    for (Index v : loop) s.crease_target[v] = round;
    for (std::size_t head = 0; head < loop.size(); ++head) {
      for (Index e : mesh.vertex_edges[loop[head]]) {
        if (mesh.edges[e].triangle_count != 1) continue;
        for (Index u : mesh.edges[e].vertices) {
          if (s.crease_target[u] == round) continue;
          s.crease_target[u] = round;
          loop.push_back(u);
        }
      }
    }
    sources = shared[inner];
  } else {
    if (shared[0].empty() || shared[1].empty()) return false;
    for (Index v : shared[1]) s.crease_target[v] = round;
    sources = shared[0];
  }
  return fold_path(mesh, x, sources, limit, s);
}

// The regions of one contour. Each side's own cut edges bound its region (a loop's inside, the
// flap beyond a border path). An open curve whose two ends run into pinched fans is different:
// such a double curve is one closed curve on the surface, its path on side 0 and its path on
// side 1 joined at the two pinch vertices, and that loop bounds one region around the fold
// between them. It is split between the sides by which side's path is nearer (a breadth-first
// search from both at once), and each part goes back through the other as a loop's two
// regions do.
void contour_regions(const ClothMesh& mesh, const Positions& x, const Intersections& intersections,
                     const Contour& contour, const GiaOptions& options, Scratch& s,
                     ContourRegions& out) {
  // What each end's triangles share with the next ones (shared_at_end). One vertex is a pinch:
  // the curve would go on across the end hit's edge into a triangle that shares only that vertex
  // with the one crossed, which the narrow phase skips (a fan folded through itself there), so
  // the curve ends at that vertex.
  std::array<std::vector<Index>, 2> shared;
  std::array<Index, 2> pinch{kNoIndex, kNoIndex};
  if (contour.type != ContourType::kLoop && !contour.hits.empty()) {
    for (int end = 0; end < 2; ++end) {
      shared[end] = shared_at_end(mesh, intersections, contour, end == 1);
      if (shared[end].size() == 1) pinch[end] = shared[end][0];
    }
  }
  // The curve goes on to a pinch vertex at its end, so the vertex is part of the cut: no part
  // grows through it (a path from a pinch at the border to the border cuts a flap off).
  auto block_pinches = [&](std::uint8_t blocked) {
    for (Index p : pinch) {
      if (p != kNoIndex) s.blocked[p] = blocked;
    }
  };
  block_pinches(1);
  if (pinch[0] == kNoIndex || pinch[1] == kNoIndex) {
    // Looked for when a side's own cut bounds nothing: the path from the curve's inner end along
    // the fold it runs into (close_along_fold), whose vertices are blocked for that side.
    int closure = -1;  // not looked for yet; then 0 (none) or 1
    std::vector<Index> closure_blocked;
    auto block_closure = [&](std::uint8_t blocked) {
      for (Index v : closure_blocked) s.blocked[v] = blocked;
    };
    for (int side = 0; side < 2; ++side) {
      collect_cuts(intersections, contour, 1u << side, s);
      flood_region(mesh, options, s, out.vertices[side]);
      if (out.vertices[side].empty() && contour.type != ContourType::kLoop &&
          options.close_at_creases && closure != 0) {
        if (closure < 0) {
          closure = close_along_fold(mesh, x, intersections, contour, shared,
                                     options.max_region_vertices, s);
          for (Index v : s.closure) {
            if (!s.blocked[v]) closure_blocked.push_back(v);
          }
        }
        if (closure == 1) {
          block_closure(1);
          collect_cuts(intersections, contour, 1u << side, s);
          flood_region(mesh, options, s, out.vertices[side]);
          block_closure(0);
        }
      }
      way_back(mesh, x, intersections, s, side, out.vertices[side], out.back_through[side],
               out.depth[side]);
    }
    block_pinches(0);
    return;
  }
  collect_cuts(intersections, contour, 3u, s);
  std::vector<Index> region;
  flood_region(mesh, options, s, region);
  block_pinches(0);
  // Split: both sides' cut edges seed their ends inside the region, in order; each vertex takes
  // the side that reaches it first.
  const std::uint32_t stamp = s.stamp;
  auto inside = [&](Index v) { return std::binary_search(region.begin(), region.end(), v); };
  s.split_queue.clear();
  for (int side = 0; side < 2; ++side) {
    for (std::size_t k = 0; k < s.cut_edges.size(); ++k) {
      const Index e = s.cut_edges[k];
      if (!s.edge_odd[e] || s.cut_side[k] != side) continue;
      for (Index v : mesh.edges[e].vertices) {
        if (!inside(v) || s.vertex_stamp[v] == stamp + 1) continue;
        s.vertex_stamp[v] = stamp + 1;
        s.label[v] = static_cast<std::uint8_t>(side);
        s.split_queue.push_back(v);
      }
    }
  }
  for (std::size_t head = 0; head < s.split_queue.size(); ++head) {
    const Index v = s.split_queue[head];
    for (Index e : mesh.vertex_edges[v]) {
      if (s.edge_stamp[e] == stamp && s.edge_odd[e]) continue;
      const MeshEdge& edge = mesh.edges[e];
      const Index u = edge.vertices[0] == v ? edge.vertices[1] : edge.vertices[0];
      if (s.vertex_stamp[u] == stamp + 1 || !inside(u)) continue;
      s.vertex_stamp[u] = stamp + 1;
      s.label[u] = s.label[v];
      s.split_queue.push_back(u);
    }
  }
  ++s.stamp;  // the split's stamp is used: the next round starts past it
  for (int side = 0; side < 2; ++side) {
    out.vertices[side].clear();
    for (Index v : region) {
      if (s.vertex_stamp[v] == stamp + 1 && s.label[v] == side) out.vertices[side].push_back(v);
    }
    way_back(mesh, x, intersections, s, side, out.vertices[side], out.back_through[side],
             out.depth[side]);
  }
}

}  // namespace

bool GlobalIntersections::opposite(Index a, Index b) const {
  const auto la = vertex_regions[a];
  const auto lb = vertex_regions[b];
  for (Index x : la) {
    for (Index y : lb) {
      if (x / 2 == y / 2 && x != y) return true;
    }
  }
  return false;
}

GlobalIntersections analyse_intersections(const ClothMesh& mesh, const Positions& positions,
                                          const Intersections& intersections,
                                          const Contours& contours, const GiaOptions& options) {
  const double start = omp_get_wtime();
  GlobalIntersections out;
  const std::size_t count = contours.contours.size();
  out.contours.resize(count);
  ParallelErrors errors;
#pragma omp parallel if (count > 8)
  {
    errors.run([&] {
      Scratch scratch;
      scratch.vertex_stamp.assign(mesh.vertex_count(), 0);
      scratch.owner.assign(mesh.vertex_count(), 0);
      scratch.edge_stamp.assign(mesh.edges.size(), 0);
      scratch.edge_odd.assign(mesh.edges.size(), 0);
      scratch.blocked.assign(mesh.vertex_count(), 0);
      scratch.label.assign(mesh.vertex_count(), 0);
      scratch.crease_stamp.assign(mesh.vertex_count(), 0);
      scratch.crease_distance.assign(mesh.vertex_count(), 0);
      scratch.crease_target.assign(mesh.vertex_count(), 0);
      scratch.crease_previous.assign(mesh.vertex_count(), kNoIndex);
#pragma omp for schedule(dynamic, 4)
      for (std::ptrdiff_t c = 0; c < static_cast<std::ptrdiff_t>(count); ++c) {
        errors.run([&] {
          contour_regions(mesh, positions, intersections,
                          contours.contours[static_cast<std::size_t>(c)], options, scratch,
                          out.contours[static_cast<std::size_t>(c)]);
        });
      }
    });
  }
  errors.rethrow();

  Adjacency& labels = out.vertex_regions;
  labels.offsets.assign(mesh.vertex_count() + 1, 0);
  for (const ContourRegions& regions : out.contours) {
    for (const auto& side : regions.vertices) {
      for (Index v : side) ++labels.offsets[v + 1];
    }
  }
  std::partial_sum(labels.offsets.begin(), labels.offsets.end(), labels.offsets.begin());
  labels.items.resize(labels.offsets.back());
  std::vector<Index> fill(labels.offsets.begin(), labels.offsets.end() - 1);
  for (std::size_t c = 0; c < count; ++c) {
    for (int side = 0; side < 2; ++side) {
      for (Index v : out.contours[c].vertices[side]) {
        labels.items[fill[v]++] = static_cast<Index>(2 * c + side);
      }
    }
  }
  out.seconds = omp_get_wtime() - start;
  return out;
}

}  // namespace untangle

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

// The region one side of a contour bounds: the parts its cut edges split the piece into, grown
// from both ends of every cut edge at once, one vertex per part in turn, so the work is about
// the size of the parts other than the largest. The parts that complete while another is still
// growing are the region; when all complete (a piece split in two), all but the largest.
void side_region(const ClothMesh& mesh, const Positions& x, const Intersections& intersections,
                 const Contour& contour, int side, const GiaOptions& options, Scratch& s,
                 std::vector<Index>& region, Vec3& back_through, double& depth) {
  region.clear();
  back_through = Vec3::Zero();
  depth = 0;
  ++s.stamp;
  const std::uint32_t stamp = s.stamp;
  // Cut edges: the side's edges that pierce the other side, an odd number of times.
  s.cut_edges.clear();
  s.cut_hits.clear();
  for (std::size_t k = 0; k < contour.hits.size(); ++k) {
    if ((contour.hit_edge_on_side0[k] != 0) != (side == 0)) continue;
    const Index h = contour.hits[k];
    const Index e = intersections.hits[h].edge;
    if (s.edge_stamp[e] != stamp) {
      s.edge_stamp[e] = stamp;
      s.edge_odd[e] = 0;
      s.cut_edges.push_back(e);
      s.cut_hits.push_back(h);
    }
    s.edge_odd[e] ^= 1;
  }
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
      if (s.vertex_stamp[v] == stamp) continue;
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
  if (region.empty()) return;
  std::sort(region.begin(), region.end());
  Vec3 crossing_sum = Vec3::Zero();
  std::size_t crossings = 0;
  for (std::size_t k = 0; k < s.cut_edges.size(); ++k) {
    const Index e = s.cut_edges[k];
    if (!s.edge_odd[e]) continue;
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
  // How far the region reaches beyond the surface it went through: beyond the mean crossing
  // point, against the way back.
  const double length = back_through.norm();
  if (crossings == 0 || !(length > 0)) return;
  const Vec3 way = back_through / length;
  const Vec3 crossing = crossing_sum / static_cast<double>(crossings);
  for (Index v : region) depth = std::max(depth, (crossing - x[v]).dot(way));
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
#pragma omp for schedule(dynamic, 4)
      for (std::ptrdiff_t c = 0; c < static_cast<std::ptrdiff_t>(count); ++c) {
        errors.run([&] {
          ContourRegions& regions = out.contours[static_cast<std::size_t>(c)];
          for (int side = 0; side < 2; ++side) {
            side_region(mesh, positions, intersections,
                        contours.contours[static_cast<std::size_t>(c)], side, options, scratch,
                        regions.vertices[side], regions.back_through[side], regions.depth[side]);
          }
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

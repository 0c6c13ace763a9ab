#include "untangle/contours.hpp"

#include <omp.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "parallel_errors.hpp"

namespace untangle {

namespace {

// The contour graph: hits are nodes, segments are links. Row h lists the segments through hit
// h in increasing order, so "the lowest unvisited one" is a deterministic choice where a hit
// has more than two segments (non-manifold edges).
Adjacency hit_segments(std::size_t hit_count, const std::vector<Segment>& segments) {
  Adjacency adjacency;
  adjacency.offsets.assign(hit_count + 1, 0);
  for (const Segment& s : segments) {
    ++adjacency.offsets[s.hits[0] + 1];
    ++adjacency.offsets[s.hits[1] + 1];
  }
  for (std::size_t h = 0; h < hit_count; ++h) adjacency.offsets[h + 1] += adjacency.offsets[h];
  adjacency.items.resize(adjacency.offsets.back());
  std::vector<Index> fill(adjacency.offsets.begin(), adjacency.offsets.end() - 1);
  for (std::size_t s = 0; s < segments.size(); ++s) {
    adjacency.items[fill[segments[s].hits[0]]++] = static_cast<Index>(s);
    adjacency.items[fill[segments[s].hits[1]]++] = static_cast<Index>(s);
  }
  return adjacency;
}

Index other_hit(const Segment& s, Index h) {
  return s.hits[0] == h ? s.hits[1] : s.hits[0];
}
Index other_triangle(const Segment& s, Index t) {
  return s.triangles[0] == t ? s.triangles[1] : s.triangles[0];
}

// Walks from `hit` away from the segments already taken, appending segments and hits, until a
// dead end or the return to `stop_hit` (then returns true: the path closed).
bool walk(const std::vector<Segment>& segments, const Adjacency& at_hit, Index hit, Index stop_hit,
          std::vector<std::uint8_t>& visited, std::vector<Index>& path_segments,
          std::vector<Index>& path_hits) {
  for (;;) {
    Index next = kNoIndex;
    for (Index s : at_hit[hit]) {
      if (!visited[s]) {
        next = s;
        break;
      }
    }
    if (next == kNoIndex) return false;
    visited[next] = 1;
    path_segments.push_back(next);
    hit = other_hit(segments[next], hit);
    if (hit == stop_hit) return true;
    path_hits.push_back(hit);
  }
}

}  // namespace

Contours trace_contours(const ClothMesh& mesh, const Positions& positions,
                        const Intersections& intersections) {
  Contours out;
  trace_contours(mesh, positions, intersections, out);
  return out;
}

void trace_contours(const ClothMesh& mesh, const Positions& positions,
                    const Intersections& intersections, Contours& out) {
  if (positions.size() != mesh.vertex_count()) {
    throw std::invalid_argument("trace_contours: " + std::to_string(positions.size()) +
                                " positions given for a mesh of " +
                                std::to_string(mesh.vertex_count()) + " vertices");
  }
  const double start = omp_get_wtime();
  const auto& segments = intersections.segments;
  const auto& hits = intersections.hits;
  for (const Segment& s : segments) {
    if (s.hits[0] >= hits.size() || s.hits[1] >= hits.size() || s.hits[0] == s.hits[1]) {
      throw std::invalid_argument("trace_contours: a segment refers to a missing hit");
    }
  }
  const Adjacency at_hit = hit_segments(hits.size(), segments);
  // Contours written over the last call's keep their lists' memory.
  std::size_t contour_count = 0;
  out.count_by_type = {};
  out.segment_contour.assign(segments.size(), kNoIndex);
  std::vector<std::uint8_t> visited(segments.size(), 0);

  // Each new contour starts at the lowest unvisited segment, which is then its smallest one:
  // the contours come out ordered by their smallest segment. The walk is sequential (which
  // segment is free depends on the contours before); everything else is per contour, below.
  std::vector<std::size_t> start_position;  // per contour: where its first segment s0 lies
  // The walks' lists, reused from one contour to the next (a contour allocates only its own).
  std::vector<Index> forward_segments, forward_hits, backward_segments, backward_hits;
  for (std::size_t first = 0; first < segments.size(); ++first) {
    if (visited[first]) continue;
    const Index s0 = static_cast<Index>(first);
    visited[s0] = 1;
    if (contour_count == out.contours.size()) out.contours.emplace_back();
    Contour& c = out.contours[contour_count++];
    forward_segments.assign({s0});
    forward_hits.assign({segments[s0].hits[0], segments[s0].hits[1]});
    backward_segments.clear();
    backward_hits.clear();
    c.closed = walk(segments, at_hit, segments[s0].hits[1], segments[s0].hits[0], visited,
                    forward_segments, forward_hits);
    if (!c.closed) {
      walk(segments, at_hit, segments[s0].hits[0], kNoIndex, visited, backward_segments,
           backward_hits);
    }
    // Path: reversed backward part, then the forward part. Segment i joins hits i and i + 1
    // (i + 1 modulo the hit count on a loop).
    c.segments.reserve(backward_segments.size() + forward_segments.size());
    c.segments.assign(backward_segments.rbegin(), backward_segments.rend());
    c.segments.insert(c.segments.end(), forward_segments.begin(), forward_segments.end());
    c.hits.reserve(backward_hits.size() + forward_hits.size());
    c.hits.assign(backward_hits.rbegin(), backward_hits.rend());
    c.hits.insert(c.hits.end(), forward_hits.begin(), forward_hits.end());
    start_position.push_back(backward_segments.size());
  }
  out.contours.resize(contour_count);

  // Per contour in parallel: sides, pieces, type, length (summed in walking order), so the
  // result does not depend on the thread count.
  ParallelErrors errors;
#pragma omp parallel for schedule(dynamic, 16)
  for (std::size_t ci = 0; ci < out.contours.size(); ++ci) {
    errors.run([&] {
      Contour& c = out.contours[ci];
      const std::size_t n = c.segments.size();
      // Sides: at hit (e, t), t is on one side and the triangles of e on the other, and t is in
      // both segments through the hit; so a side is carried across each hit by t.
      c.side0_triangles.assign(n, kNoIndex);
      const std::size_t k0 = start_position[ci];
      c.side0_triangles[k0] = segments[c.segments[k0]].triangles[0];
      for (std::size_t i = k0 + 1; i < n; ++i) {
        const Index t = hits[c.hits[i]].triangle;
        c.side0_triangles[i] =
            c.side0_triangles[i - 1] == t ? t : other_triangle(segments[c.segments[i]], t);
      }
      for (std::size_t i = k0; i-- > 0;) {
        const Index t = hits[c.hits[i + 1]].triangle;
        c.side0_triangles[i] =
            c.side0_triangles[i + 1] == t ? t : other_triangle(segments[c.segments[i]], t);
      }
      c.hit_edge_on_side0.resize(c.hits.size());
      for (std::size_t k = 0; k < c.hits.size(); ++k) {
        const std::size_t seg = std::min(k, n - 1);  // the last hit of a path ends segment n - 1
        c.hit_edge_on_side0[k] = c.side0_triangles[seg] != hits[c.hits[k]].triangle ? 1 : 0;
      }
      const Index side0 = c.side0_triangles[0];
      c.pieces = {mesh.triangle_piece[side0],
                  mesh.triangle_piece[other_triangle(segments[c.segments[0]], side0)]};
      if (c.closed) {
        c.type = ContourType::kLoop;
      } else {
        const bool border_end = mesh.edge_is_border[hits[c.hits.front()].edge] ||
                                mesh.edge_is_border[hits[c.hits.back()].edge];
        c.type = border_end ? ContourType::kBoundary : ContourType::kCrease;
      }
      for (Index s : c.segments) out.segment_contour[s] = static_cast<Index>(ci);
      double length = 0;
      for (std::size_t k = 0; k + 1 < c.hits.size(); ++k) {
        length += (hits[c.hits[k + 1]].point - hits[c.hits[k]].point).norm();
      }
      if (c.closed) length += (hits[c.hits.front()].point - hits[c.hits.back()].point).norm();
      c.length = length;
    });
  }
  errors.rethrow();
  for (const Contour& c : out.contours) ++out.count_by_type[static_cast<std::size_t>(c.type)];
  out.seconds = omp_get_wtime() - start;
}

}  // namespace untangle

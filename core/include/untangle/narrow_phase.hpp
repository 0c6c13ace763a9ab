// The narrow phase: for every candidate triangle pair, the three edges of each triangle against
// the other triangle (Moller-Trumbore). Two hits of one pair are one contour segment. Pairs that
// share a vertex are skipped; hits exactly through a vertex or an edge are dropped and counted.
#pragma once

#include <memory>

#include "untangle/bvh.hpp"

namespace untangle {

// An edge of one triangle crossing the inside of another.
struct Hit {
  Index edge = kNoIndex;      // ClothMesh::edges index
  Index triangle = kNoIndex;  // the triangle it crosses
  Vec3 point = Vec3::Zero();
  double t = 0;                     // point = (1 - t) * x[v0] + t * x[v1], v = edges[edge].vertices
  Vec3 barycentric = Vec3::Zero();  // of point, for the triangle's corners 0, 1, 2
};

// The piece of contour inside one intersecting triangle pair: between its two hits.
struct Segment {
  std::array<Index, 2> triangles;  // triangles[0] < triangles[1]
  std::array<Index, 2> hits;       // indices into Intersections::hits
};

struct Intersections {
  std::vector<Hit> hits;                    // unique, sorted by (edge, triangle)
  std::vector<Segment> segments;            // sorted by triangles
  std::vector<std::array<Index, 2>> pairs;  // triangle pairs with at least one hit, a < b, sorted
  std::size_t dropped_hits = 0;      // exactly through a vertex or an edge: dropped this frame
  std::vector<Index> dropped_edges;  // the edges of those hits, sorted, each once
  // Triangle pairs of the candidate leaves whose boxes overlap and that share no vertex: those
  // the exact tests ran on.
  std::size_t candidate_pairs = 0;
  std::vector<Index> culled_nodes;
  double broad_seconds = 0;
  double narrow_seconds = 0;
};

struct DetectOptions {
  bool cull = true;
};

// Relative tolerance of a hit: the edge parameter t and the barycentrics of the crossing must
// all lie more than this inside (0, 1), otherwise the hit goes exactly through (or too close
// to) a vertex or an edge of the triangle, or the edge ends on its plane, and it is dropped.
inline constexpr double kHitTolerance = 1e-10;
// An edge whose direction makes a sine below this with the triangle's plane is parallel to it
// and has no transversal crossing (coplanar overlaps are not intersections of the contour).
inline constexpr double kParallelTolerance = 1e-12;

enum class EdgeTriangleResult { kNone = 0, kHit = 1, kDropped = 2 };

// Moller-Trumbore of the segment p0 -> p1 against triangle (a, b, c). On kHit fills t, point
// and barycentric of `hit` (not edge and triangle). A pure function of its inputs: the same
// (edge, triangle) computed from either triangle of the edge gives bit-identical results.
EdgeTriangleResult intersect_edge_triangle(const Vec3& p0, const Vec3& p1, const Vec3& a,
                                           const Vec3& b, const Vec3& c, Hit& hit);

// Working memory the narrow phase keeps from one call to the next: per-triangle records and
// per-block outputs. Fresh large buffers every frame cost a page fault per 4 KiB touched, more
// than the tests on large meshes. Use one per thread that calls find_intersections.
class NarrowPhaseBuffers {
 public:
  NarrowPhaseBuffers();
  ~NarrowPhaseBuffers();
  NarrowPhaseBuffers(NarrowPhaseBuffers&&) noexcept;
  NarrowPhaseBuffers& operator=(NarrowPhaseBuffers&&) noexcept;

  struct Storage;  // narrow_phase.cpp
  std::unique_ptr<Storage> storage;
};

// The BVH must have been refit to `positions`. Without buffers, the call allocates its own.
Intersections find_intersections(const ClothMesh& mesh, const Bvh& bvh, const Positions& positions,
                                 const DetectOptions& options = {},
                                 NarrowPhaseBuffers* buffers = nullptr);
// The same written over `out`, whose vectors keep their memory: a frame's result in place of the
// last one's, without allocating and filling fresh lists.
void find_intersections(const ClothMesh& mesh, const Bvh& bvh, const Positions& positions,
                        const DetectOptions& options, NarrowPhaseBuffers* buffers,
                        Intersections& out);

}  // namespace untangle

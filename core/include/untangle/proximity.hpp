// Proximity: the point-triangle and edge-edge pairs of the cloth that are closer than the
// thickness (SPEC "Proximity constraints", the repulsion pairs of Bridson 2002 / Mueller 2007),
// found with the BVH inflated by the thickness. The solver keeps such pairs apart.
#pragma once

#include "untangle/bvh.hpp"

namespace untangle {

struct PointTrianglePair {
  Index point = kNoIndex;
  Index triangle = kNoIndex;
  auto operator<=>(const PointTrianglePair&) const = default;
};

struct EdgeEdgePair {
  std::array<Index, 2> edges{kNoIndex, kNoIndex};  // edges[0] < edges[1]
  auto operator<=>(const EdgeEdgePair&) const = default;
};

struct ProximityPairs {
  std::vector<PointTrianglePair> point_triangle;  // sorted, unique
  std::vector<EdgeEdgePair> edge_edge;            // sorted, unique
  std::size_t size() const { return point_triangle.size() + edge_edge.size(); }
};

// Pairs closer than `thickness` at `positions`. The BVH must have been refit to `positions` with
// an inflation of at least `thickness`. Topological neighbours are left out, as bending keeps them
// apart and the narrow phase skips them too: a point is not paired with a triangle of a leaf that
// holds it or shares a polygon with it (ClothMesh::vertex_ring), nor an edge with an edge whose end
// points share a polygon.
// Parallel; the result does not depend on the thread count.
ProximityPairs find_proximity_pairs(const ClothMesh& mesh, const Bvh& bvh,
                                    const Positions& positions, double thickness);

// The point of triangle (a, b, c) closest to p, with its barycentric weights (Ericson 5.1.5).
Vec3 closest_point_on_triangle(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c,
                               Vec3& barycentric);

// Parameters s, t of the closest points a0 + s (a1 - a0) and b0 + t (b1 - b0) of two segments
// (Ericson 5.1.9); degenerate segments are handled.
void closest_points_of_segments(const Vec3& a0, const Vec3& a1, const Vec3& b0, const Vec3& b1,
                                double& s, double& t);

}  // namespace untangle

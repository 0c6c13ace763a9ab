// The tests of one leaf pair: each point with each triangle of the other leaf, and each edge
// with each edge, that the neighbour rule keeps and whose volumes meet.
#include <bit>

#include "edge_edge_distance.hpp"
#include "internal.hpp"
#include "point_triangle_distance.hpp"

namespace untangle {
namespace {

using proximity_detail::close_inside;
using proximity_detail::edges_pass;
using proximity_detail::meet;
using proximity_detail::passes_through;

// Point-triangle pairs of the owned vertices of `points` listed in `live` (bit i: owned vertex i)
// with the triangles of `triangles`.
void point_triangle_pairs(const ClothMesh& mesh, const Positions& x, const Positions* from,
                          const ProximitySearch::PrimitiveVolumes& volumes,
                          const ProximitySearch::LeafParts& points, unsigned live,
                          const ProximitySearch::LeafParts& triangles, double thickness,
                          std::vector<PointTrianglePair>& out) {
  for (; live != 0; live &= live - 1) {
    const Index p = points.owned_vertices[std::countr_zero(live)];
    for (int j = 0; j < triangles.triangle_count; ++j) {
      const Index t = triangles.triangles[j];
      const auto& tri = mesh.triangles[t];
      if (!meet(volumes.vertices[p], volumes.triangles[t])) continue;
      Vec3 barycentric;
      const Vec3 q = closest_point_on_triangle(x[p], x[tri[0]], x[tri[1]], x[tri[2]], barycentric);
      if ((x[p] - q).squaredNorm() < thickness * thickness ||
          (from != nullptr && passes_through(*from, x, p, tri, thickness))) {
        out.push_back({p, t});
      }
    }
  }
}

// Edge-edge pairs of the owned edges of a and b listed in `live` (bit 5 i + j: owned edge i of a
// with owned edge j of b).
void edge_edge_pairs(const ClothMesh& mesh, const Positions& x, const Positions* from,
                     const ProximitySearch::PrimitiveVolumes& volumes,
                     const ProximitySearch::LeafParts& a, const ProximitySearch::LeafParts& b,
                     std::uint32_t live, double thickness, std::vector<EdgeEdgePair>& out) {
  for (; live != 0; live &= live - 1) {
    const int bit = std::countr_zero(live);
    const Index e0 = a.owned_edges[bit / 5], e1 = b.owned_edges[bit % 5];
    const auto& ea = mesh.edges[e0].vertices;
    const auto& eb = mesh.edges[e1].vertices;
    if (!meet(volumes.edges[e0], volumes.edges[e1])) continue;
    if (close_inside(x[ea[0]], x[ea[1]], x[eb[0]], x[eb[1]], thickness) ||
        (from != nullptr && edges_pass(*from, x, ea, eb, thickness))) {
      out.push_back({{std::min(e0, e1), std::max(e0, e1)}});
    }
  }
}

}  // namespace

void ProximitySearch::test_leaves(const CloseLeafPair& pair, const LiveTests& tests,
                                  const Positions& x, double thickness, ProximityPairs& out) const {
  const ClothMesh& mesh = bvh_->mesh();
  const LeafParts& pa = parts_[pair.a];
  const LeafParts& pb = parts_[pair.b];
  const Kdop18f& box_a = leaf_boxes_[pair.a];
  const Kdop18f& box_b = leaf_boxes_[pair.b];
  const PrimitiveVolumes& volumes = primitive_volumes_;
  // A point or edge whose volume misses the other leaf's box meets none of its parts: one test
  // instead of a row of them (neighbouring leaves meet only at a corner or a side).
  unsigned points_a = tests.points_a, points_b = tests.points_b;
  std::uint32_t edges = tests.edges;
  for (int i = 0; i < pa.owned_vertex_count; ++i) {
    if (!meet(volumes.vertices[pa.owned_vertices[i]], box_b)) points_a &= ~(1u << i);
  }
  for (int j = 0; j < pb.owned_vertex_count; ++j) {
    if (!meet(volumes.vertices[pb.owned_vertices[j]], box_a)) points_b &= ~(1u << j);
  }
  if (edges != 0) {
    constexpr std::uint32_t kRow = 0x1f, kColumn = 0x108421;  // bits 5 i + j for one i or j
    for (int i = 0; i < pa.owned_edge_count; ++i) {
      if (!meet(volumes.edges[pa.owned_edges[i]], box_b)) edges &= ~(kRow << (5 * i));
    }
    for (int j = 0; j < pb.owned_edge_count; ++j) {
      if (!meet(volumes.edges[pb.owned_edges[j]], box_a)) edges &= ~(kColumn << j);
    }
  }
  point_triangle_pairs(mesh, x, from_, volumes, pa, points_a, pb, thickness, out.point_triangle);
  point_triangle_pairs(mesh, x, from_, volumes, pb, points_b, pa, thickness, out.point_triangle);
  edge_edge_pairs(mesh, x, from_, volumes, pa, pb, edges, thickness, out.edge_edge);
}

}  // namespace untangle

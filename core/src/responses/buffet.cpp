#include "untangle/responses/buffet.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "untangle/bvh.hpp"
#include "untangle/proximity.hpp"

#include "../parallel_errors.hpp"

namespace untangle {
namespace {

// Squared distance from p to the axis-aligned part (x, y, z slabs) of a node's volume: a lower
// bound of the distance to anything inside it.
double box_distance_squared(const Kdop18f& volume, const Vec3& p) {
  double sum = 0;
  for (int axis = 0; axis < 3; ++axis) {
    const double below = static_cast<double>(volume.min[axis]) - p[axis];
    const double above = p[axis] - static_cast<double>(volume.max[axis]);
    const double gap = std::max({below, above, 0.0});
    sum += gap * gap;
  }
  return sum;
}

struct Closest {
  Index triangle = kNoIndex;
  Vec3 point = Vec3::Zero();
  double distance_squared = std::numeric_limits<double>::infinity();
};

// Depth-first search of one piece's tree, nearer child first, pruned by the best distance.
Closest closest_triangle(const ClothMesh& mesh, const Bvh& bvh, const Positions& x, Index root,
                         const Vec3& p) {
  Closest best;
  const auto& nodes = bvh.nodes();
  std::vector<Index> stack{root};
  while (!stack.empty()) {
    const Index n = stack.back();
    stack.pop_back();
    const BvhNode& node = nodes[n];
    // Not pruned at equal distance: a tie there may go to a lower triangle.
    if (box_distance_squared(bvh.volume(n), p) > best.distance_squared) continue;
    if (node.leaf != kNoIndex) {
      for (Index t : mesh.leaves[node.leaf]) {
        if (t == kNoIndex || !mesh.triangle_detectable[t]) continue;
        const auto& c = mesh.triangles[t];
        Vec3 barycentric;
        const Vec3 q = closest_point_on_triangle(p, x[c[0]], x[c[1]], x[c[2]], barycentric);
        const double d = (q - p).squaredNorm();
        // Ties (a point nearest to a shared edge or corner) go to the lower triangle, whatever
        // the tree's shape and so the order of the search.
        if (d < best.distance_squared || (d == best.distance_squared && t < best.triangle)) {
          best = {t, q, d};
        }
      }
      continue;
    }
    const double dl = box_distance_squared(bvh.volume(node.left), p);
    const double dr = box_distance_squared(bvh.volume(node.right), p);
    // Pushed last = visited first.
    if (dl < dr) {
      stack.push_back(node.right);
      stack.push_back(node.left);
    } else {
      stack.push_back(node.left);
      stack.push_back(node.right);
    }
  }
  return best;
}

std::vector<Index> layer_ranks(const std::vector<Index>& order, std::size_t pieces) {
  std::vector<Index> rank(pieces, kNoIndex);
  if (order.empty()) {
    for (std::size_t p = 0; p < pieces; ++p) rank[p] = static_cast<Index>(p);
    return rank;
  }
  if (order.size() != pieces) {
    throw std::invalid_argument("layer order lists " + std::to_string(order.size()) +
                                " pieces, but the mesh has " + std::to_string(pieces));
  }
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (order[i] >= pieces || rank[order[i]] != kNoIndex) {
      throw std::invalid_argument("layer order must list every piece once; entry " +
                                  std::to_string(i) + " is " + std::to_string(order[i]));
    }
    rank[order[i]] = static_cast<Index>(i);
  }
  return rank;
}

struct VertexMove {
  Vec3 delta = Vec3::Zero();
  bool wrong_side = false;
  bool capped = false;
};

}  // namespace

Displacement BuffetResponse::compute(const ResponseInput& input) {
  const ClothMesh& mesh = input.mesh;
  const Positions& x = input.positions;
  Displacement out;
  out.carries_momentum = false;  // like the proximity push
  stats_ = {};
  const std::size_t pieces = mesh.piece_count();
  if (pieces < 2) {
    stats_.single_sheet = true;
    return out;
  }
  const std::vector<Index> rank = layer_ranks(layer_order_, pieces);
  const double thickness = input.settings.thickness;
  const double cap = input.settings.response_strength * input.spacing;
  const double foot_tolerance = input.spacing;
  const auto roots = input.bvh.roots();

  std::vector<VertexMove> moves(mesh.vertex_count());
  const auto vertex_count = static_cast<std::ptrdiff_t>(mesh.vertex_count());
  ParallelErrors errors;
#pragma omp parallel for schedule(dynamic, 64)
  for (std::ptrdiff_t i = 0; i < vertex_count; ++i) {
    errors.run([&] {
      const auto v = static_cast<Index>(i);
      if (input.inverse_mass[v] <= 0) return;
      const Index p = mesh.vertex_piece[v];
      Vec3 step = Vec3::Zero();
      for (Index q = 0; q < pieces; ++q) {
        if (q == p) continue;
        const Closest closest = closest_triangle(mesh, input.bvh, x, roots[q], x[v]);
        if (closest.triangle == kNoIndex) continue;
        const auto& c = mesh.triangles[closest.triangle];
        Vec3 normal = (x[c[1]] - x[c[0]]).cross(x[c[2]] - x[c[0]]);
        if (normal.norm() <= 0) continue;
        normal.normalize();
        const double height = (x[v] - x[c[0]]).dot(normal);
        const Vec3 foot = x[v] - height * normal;
        if ((foot - closest.point).norm() > foot_tolerance) continue;  // q is not under v
        // The field of layer q seen from v, offset by the thickness (eq. 13): v belongs outside
        // (in front of) every inner layer and behind every outer one.
        const double outward = rank[p] > rank[q] ? 1.0 : -1.0;
        const double field = outward * height - thickness;
        if (field >= 0) continue;
        moves[v].wrong_side = true;
        // The mean surface of the two layers lies halfway (field / 2) between v and where layer q
        // wants it; one damped Newton step towards it along the field's gradient.
        step += kNewtonStep * (-0.5 * field) * outward * normal;
      }
      const double length = step.norm();
      if (length > cap) {
        step *= cap / length;
        moves[v].capped = true;
      }
      moves[v].delta = step;
    });
  }
  errors.rethrow();

  for (const VertexMove& move : moves) {
    stats_.wrong_side_vertices += move.wrong_side;
    stats_.capped_vertices += move.capped;
  }
  if (stats_.wrong_side_vertices == 0) return out;
  out.delta.resize(mesh.vertex_count());
  out.near_contour.resize(mesh.vertex_count());
  for (std::size_t v = 0; v < moves.size(); ++v) {
    out.delta[v] = moves[v].delta;
    out.near_contour[v] = moves[v].wrong_side;
  }
  return out;
}

}  // namespace untangle

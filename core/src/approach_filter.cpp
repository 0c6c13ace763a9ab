#include "untangle/approach_filter.hpp"

#include <algorithm>

namespace untangle {
namespace {

// The gap a pair may close to within one frame, in thicknesses (Bridson et al. 2002 keep 0.1).
constexpr double kKeptGap = 0.1;
// Gauss-Seidel passes over the pairs until none is below its gap: a correction of one pair moves
// its neighbours, and the pairs of a closing fold share particles (a fold of the tangled start
// needs 9).
constexpr int kMaxPasses = 20;

struct Pair {
  std::array<Index, 4> particles;  // point, triangle corners; or edge, edge
  bool point_triangle = true;
  // Unit, at the frame's end, toward the first part's side: the triangle's normal, or the edges'
  // lines' common normal (two edges pass through each other where their lines do; the closest
  // points' direction only where the lines are parallel). Kept fixed while the pair is held, so
  // holding a pair never pushes sideways.
  Vec3 normal;
  double least = 0;  // the gap the prediction must leave
};

// The pair's gap at x along its normal, with the weight of each particle's move in it.
double gap_of(const Pair& pair, const Positions& x, std::array<double, 4>& weights) {
  const auto& p = pair.particles;
  if (pair.point_triangle) {
    Vec3 barycentric;
    const Vec3 q = closest_point_on_triangle(x[p[0]], x[p[1]], x[p[2]], x[p[3]], barycentric);
    weights = {1, -barycentric[0], -barycentric[1], -barycentric[2]};
    return (x[p[0]] - q).dot(pair.normal);
  }
  double s = 0, t = 0;
  closest_points_of_segments(x[p[0]], x[p[1]], x[p[2]], x[p[3]], s, t);
  weights = {1 - s, s, -(1 - t), -t};
  return (((1 - s) * x[p[0]] + s * x[p[1]]) - ((1 - t) * x[p[2]] + t * x[p[3]])).dot(pair.normal);
}

// The unit normal of a pair at the frame's end positions x, toward the first part; false when
// it has none (a degenerate triangle, touching edges).
bool normal_at(const Positions& x, Pair& pair) {
  const auto& p = pair.particles;
  Vec3 n;
  Vec3 toward_first;
  if (pair.point_triangle) {
    n = (x[p[2]] - x[p[1]]).cross(x[p[3]] - x[p[1]]);
    Vec3 barycentric;
    toward_first =
        x[p[0]] - closest_point_on_triangle(x[p[0]], x[p[1]], x[p[2]], x[p[3]], barycentric);
  } else {
    const Vec3 a = x[p[1]] - x[p[0]], b = x[p[3]] - x[p[2]];
    double s = 0, t = 0;
    closest_points_of_segments(x[p[0]], x[p[1]], x[p[2]], x[p[3]], s, t);
    toward_first = ((1 - s) * x[p[0]] + s * x[p[1]]) - ((1 - t) * x[p[2]] + t * x[p[3]]);
    n = a.cross(b);
    if (!(n.norm() > 1e-9 * a.norm() * b.norm())) n = toward_first;
  }
  const double length = n.norm();
  if (!(length > 1e-14) || !(toward_first.norm() > 1e-12)) return false;
  pair.normal = n / length;
  if (pair.normal.dot(toward_first) < 0) pair.normal = -pair.normal;
  return true;
}

}  // namespace

std::size_t filter_approach(ProximitySearch& search, const ApproachFilterInput& input,
                            Positions& v) {
  const Positions& x = input.x;
  const std::vector<double>& w = input.inverse_mass;
  const double dt = input.time_step, h = input.thickness;
  if (!(h > 0) || !(dt > 0)) return 0;
  const ClothMesh& mesh = search.mesh();
  Positions next(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    next[i] = w[i] > 0 ? Vec3(x[i] + dt * v[i] + input.gravity_step) : x[i];
  }
  const ProximityPairs& found = search.find(next, h, input.ring_pairs, &x);

  // Each pair keeps the side it has at the frame's end, and may close to kKeptGap of the
  // thickness (no closer than it is already).
  std::vector<Pair> pairs;
  pairs.reserve(found.size());
  std::array<double, 4> weights;
  auto add = [&](Pair pair) {
    if (!normal_at(x, pair)) return;
    pair.least = std::min(gap_of(pair, x, weights), kKeptGap * h);
    pairs.push_back(pair);
  };
  for (const PointTrianglePair& pt : found.point_triangle) {
    const auto& tri = mesh.triangles[pt.triangle];
    add({{pt.point, tri[0], tri[1], tri[2]}, true, Vec3::Zero(), 0});
  }
  for (const EdgeEdgePair& ee : found.edge_edge) {
    const auto& ea = mesh.edges[ee.edges[0]].vertices;
    const auto& eb = mesh.edges[ee.edges[1]].vertices;
    add({{ea[0], ea[1], eb[0], eb[1]}, false, Vec3::Zero(), 0});
  }

  // The pairs are held at their least gaps on the prediction itself (the gap is measured there,
  // so a pair that turns as it closes is held too), and the velocities follow the prediction.
  std::vector<std::uint8_t> held(pairs.size(), 0), touched(x.size(), 0);
  bool corrected = true;
  for (int pass = 0; pass < kMaxPasses && corrected; ++pass) {
    corrected = false;
    for (std::size_t k = 0; k < pairs.size(); ++k) {
      const Pair& pair = pairs[k];
      const double gap = gap_of(pair, next, weights);
      if (gap >= pair.least) continue;
      double denominator = 0;
      for (int i = 0; i < 4; ++i) denominator += w[pair.particles[i]] * weights[i] * weights[i];
      if (!(denominator > 1e-12)) continue;
      const double lambda = (pair.least - gap) / denominator;
      for (int i = 0; i < 4; ++i) {
        const Index p = pair.particles[i];
        next[p] += (w[p] * weights[i] * lambda) * pair.normal;
        touched[p] = 1;
      }
      held[k] = 1;
      corrected = true;
    }
  }
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (touched[i] && w[i] > 0) v[i] = (next[i] - x[i] - input.gravity_step) / dt;
  }
  return static_cast<std::size_t>(std::count(held.begin(), held.end(), 1));
}

}  // namespace untangle

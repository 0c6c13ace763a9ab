#include "untangle/solver.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "untangle/portable_math.hpp"

namespace untangle {
namespace {

// Below this many particles a solve runs on one thread: waking the team costs more.
constexpr std::ptrdiff_t kParallelMinimum = 512;

// Below this many proximity constraints they are projected on one thread.
constexpr std::size_t kParallelProximity = 1024;

// With SolverInput::hold_gaps, the least gap a pair is held at, in thicknesses: layers that touch
// are parted a little, so a kept state does not only just miss a crossing that a float rounding
// of the output could bring back.
constexpr double kMinimumGap = 0.25;

constexpr int kStretchSweeps = 1;

constexpr double kStretchRelaxation = 1.0;
// The part of a flattened quad's bend removed per iteration (Solver::flatten_quads): a part, not
// all of it at once, which left tangles unsolved.
constexpr double kFlattenPart = 0.2;

Index opposite_vertex(const std::array<Index, 3>& triangle, const std::array<Index, 2>& edge) {
  for (Index v : triangle) {
    if (v != edge[0] && v != edge[1]) return v;
  }
  return kNoIndex;
}

// One XPBD distance constraint |x_b - x_a| = rest (Macklin 2016, eq. 18 with the gradient n).
inline void project_distance(Positions& x, const std::vector<double>& w, Index a, Index b,
                             double rest, double alpha, double& lambda, double relaxation = 1.0) {
  const double weight = w[a] + w[b];
  if (weight <= 0) return;
  const Vec3 d = x[b] - x[a];
  const double length = d.norm();
  if (length < 1e-12) return;
  const double delta_lambda = relaxation * (-(length - rest) - alpha * lambda) / (weight + alpha);
  lambda += delta_lambda;
  const Vec3 n = d / length;
  x[a] -= w[a] * delta_lambda * n;
  x[b] += w[b] * delta_lambda * n;
}

}  // namespace

Vec3 apply_friction(const Vec3& velocity, const Vec3& normal, double depth, double friction,
                    double time_step) {
  const Vec3 tangential = velocity - velocity.dot(normal) * normal;
  const double speed = tangential.norm();
  const double limit = friction * depth / time_step;
  if (speed <= limit) return velocity - tangential;
  return velocity - tangential * (limit / speed);
}

// Distance constraints grouped by colour, stored in that order so a colour is one contiguous run.
Solver::DistanceConstraints Solver::in_colour_order(
    const std::vector<std::array<Index, 2>>& particles, const std::vector<double>& rest,
    const std::vector<std::uint8_t>& diagonal, std::size_t particle_count) {
  const Colouring colouring = colour_constraints(particles, particle_count);
  DistanceConstraints out;
  out.offsets = colouring.offsets;
  out.particles.reserve(particles.size());
  out.rest.reserve(particles.size());
  out.diagonal.reserve(particles.size());
  for (Index c : colouring.order) {
    out.particles.push_back(particles[c]);
    out.rest.push_back(rest[c]);
    out.diagonal.push_back(diagonal.empty() ? 0 : diagonal[c]);
  }
  out.lambda.assign(particles.size(), 0);
  return out;
}

Solver::Solver(const Bvh& bvh)
    : mesh_(&bvh.mesh()), strain_limit_(bvh.mesh()), proximity_search_(bvh) {
  const ClothMesh& mesh = *mesh_;
  const std::size_t n = mesh.vertex_count();
  std::vector<std::array<Index, 2>> stretch, bending;
  std::vector<double> stretch_rest, bending_rest;
  std::vector<std::uint8_t> diagonal;
  for (std::size_t e = 0; e < mesh.edges.size(); ++e) {
    const MeshEdge& edge = mesh.edges[e];
    stretch.push_back(edge.vertices);
    stretch_rest.push_back(mesh.rest_edge_lengths[e]);
    diagonal.push_back(mesh.edge_is_diagonal(edge));
  }
  for (const MeshEdge& edge : mesh.edges) {
    if (edge.triangle_count != 2) continue;
    const Index a = opposite_vertex(mesh.triangles[edge.triangles[0]], edge.vertices);
    const Index b = opposite_vertex(mesh.triangles[edge.triangles[1]], edge.vertices);
    if (a == kNoIndex || b == kNoIndex || a == b) continue;
    bending.push_back({a, b});
    bending_rest.push_back((mesh.rest_positions[a] - mesh.rest_positions[b]).norm());
  }
  stretch_ = in_colour_order(stretch, stretch_rest, diagonal, n);
  bending_ = in_colour_order(bending, bending_rest, {}, n);
}

void Solver::update_rest() {
  proximity_search_.update_detectable_triangles();
  const Positions& rest = mesh_->rest_positions;
  for (DistanceConstraints* constraints : {&stretch_, &bending_}) {
    for (std::size_t k = 0; k < constraints->particles.size(); ++k) {
      const auto& [a, b] = constraints->particles[k];
      constraints->rest[k] = (rest[a] - rest[b]).norm();
    }
  }
  strain_limit_.update_rest(rest);
}

namespace {

// A proximity pair whose two sides lie in opposite regions of one contour (for most of their
// corners) has passed through: its push must take it back, not hold it where it is.
bool passed_through(const GlobalIntersections* regions, Index point,
                    const std::array<Index, 3>& triangle) {
  if (regions == nullptr || !regions->in_region(point)) return false;
  int opposite = 0;
  for (Index c : triangle) opposite += regions->opposite(point, c);
  return opposite >= 2;
}

bool passed_through(const GlobalIntersections* regions, const std::array<Index, 2>& a,
                    const std::array<Index, 2>& b) {
  if (regions == nullptr || !(regions->in_region(a[0]) || regions->in_region(a[1]))) return false;
  int opposite = 0;
  for (Index u : a) {
    for (Index v : b) opposite += regions->opposite(u, v);
  }
  return opposite >= 3;
}

}  // namespace

void Solver::build_proximity(const SolverInput& input, const Positions& x) {
  const ClothMesh& mesh = *mesh_;
  const std::vector<double>& w = input.inverse_mass;
  const Positions& prev = input.previous;
  const ProximityPairs& pairs = proximity_search_.find(
      x, input.settings.thickness, input.ring_pairs, input.swept_proximity ? &prev : nullptr);
  const double h = input.settings.thickness;
  const bool hold = input.hold_gaps;
  proximity_.clear();
  proximity_.reserve(pairs.size());
  for (const PointTrianglePair& pair : pairs.point_triangle) {
    const auto& tri = mesh.triangles[pair.triangle];
    if (w[pair.point] + w[tri[0]] + w[tri[1]] + w[tri[2]] <= 0) continue;
    Vec3 barycentric;
    closest_point_on_triangle(x[pair.point], x[tri[0]], x[tri[1]], x[tri[2]], barycentric);
    const Vec3 q_prev = barycentric[0] * prev[tri[0]] + barycentric[1] * prev[tri[1]] +
                        barycentric[2] * prev[tri[2]];
    const Vec3 normal_prev = (prev[tri[1]] - prev[tri[0]]).cross(prev[tri[2]] - prev[tri[0]]);
    // The triangle's (unnormalised) normal and the point's offset from its closest point, now:
    // needed only without a side at the frame start or when the gap is held.
    auto now = [&] {
      const Vec3 normal = (x[tri[1]] - x[tri[0]]).cross(x[tri[2]] - x[tri[0]]);
      const Vec3 q =
          barycentric[0] * x[tri[0]] + barycentric[1] * x[tri[1]] + barycentric[2] * x[tri[2]];
      return std::pair{normal, Vec3(x[pair.point] - q)};
    };
    double side = (prev[pair.point] - q_prev).dot(normal_prev);
    if (side == 0) {  // no side at the frame start: take the current one
      const auto [normal, offset] = now();
      side = offset.dot(normal);
    }
    if (passed_through(input.regions, pair.point, tri)) side = -side;
    double gap = h;
    if (hold) {
      // Measured as the projection measures it: along the triangle's normal, on the pair's side.
      const auto [normal, offset] = now();
      const double length = normal.norm();
      const double signed_gap =
          length > 0 ? offset.dot(normal) / length * (side >= 0 ? 1.0 : -1.0) : 0.0;
      gap = std::clamp(signed_gap, kMinimumGap * h, h);
    }
    proximity_.push_back(
        {{pair.point, tri[0], tri[1], tri[2]}, true, Vec3(side >= 0 ? 1.0 : -1.0, 0, 0), gap});
  }
  for (const EdgeEdgePair& pair : pairs.edge_edge) {
    const auto& ea = mesh.edges[pair.edges[0]].vertices;
    const auto& eb = mesh.edges[pair.edges[1]].vertices;
    if (w[ea[0]] + w[ea[1]] + w[eb[0]] + w[eb[1]] <= 0) continue;
    double s = 0, t = 0;
    closest_points_of_segments(x[ea[0]], x[ea[1]], x[eb[0]], x[eb[1]], s, t);
    // From b's closest point to a's, at the frame start and now.
    auto between = [&](const Positions& p) -> Vec3 {
      return ((1 - s) * p[ea[0]] + s * p[ea[1]]) - ((1 - t) * p[eb[0]] + t * p[eb[1]]);
    };
    Vec3 side = between(prev);
    if (side.squaredNorm() < 1e-24) side = between(x);
    if (passed_through(input.regions, ea, eb)) side = -side;
    double gap = h;
    if (hold) {
      const Vec3 d = between(x);
      gap = std::clamp(d.dot(side) >= 0 ? d.norm() : 0.0, kMinimumGap * h, h);
    }
    proximity_.push_back({{ea[0], ea[1], eb[0], eb[1]}, false, side, gap});
  }
  // Pinned particles never move, so constraints may share them within one colour.
  std::vector<std::array<Index, 4>> moving(proximity_.size());
  for (std::size_t c = 0; c < proximity_.size(); ++c) {
    for (int k = 0; k < 4; ++k) {
      const Index p = proximity_[c].particles[k];
      moving[c][k] = w[p] > 0 ? p : kNoIndex;
    }
  }
  proximity_colours_ = colour_constraints(moving, mesh.vertex_count());
}

void Solver::project_proximity(const SolverInput& input, Positions& x, SolverOutput& output) const {
  const std::vector<double>& w = input.inverse_mass;
  const double h = input.settings.thickness;
  const Displacement* displacement = input.displacement;
  const bool rule = displacement != nullptr && !displacement->empty() &&
                    displacement->drop_opposing_proximity &&
                    displacement->near_contour.size() == x.size();
  auto project = [&](std::ptrdiff_t k) {
    const ProximityConstraint& c = proximity_[proximity_colours_.order[k]];
    const auto& p = c.particles;
    std::array<double, 4> weights;  // the gradient of C along n, per particle
    Vec3 n;
    double distance = 0;
    if (c.point_triangle) {
      Vec3 normal = (x[p[2]] - x[p[1]]).cross(x[p[3]] - x[p[1]]);
      const double area2 = normal.norm();
      if (area2 < 1e-14) return;
      n = normal * (c.side.x() / area2);
      Vec3 barycentric;
      const Vec3 q = closest_point_on_triangle(x[p[0]], x[p[1]], x[p[2]], x[p[3]], barycentric);
      distance = (x[p[0]] - q).dot(n);
      weights = {1, -barycentric[0], -barycentric[1], -barycentric[2]};
    } else {
      double s = 0, t = 0;
      closest_points_of_segments(x[p[0]], x[p[1]], x[p[2]], x[p[3]], s, t);
      const Vec3 d = ((1 - s) * x[p[0]] + s * x[p[1]]) - ((1 - t) * x[p[2]] + t * x[p[3]]);
      const double length = d.norm();
      if (length > 1e-12) {
        n = d / length;
        if (n.dot(c.side) < 0) n = -n;
      } else {
        const double side_length = c.side.norm();
        if (side_length < 1e-12) return;
        n = c.side / side_length;
      }
      distance = d.dot(n);
      weights = {1 - s, s, -(1 - t), -t};
    }
    // A pair found close may be crossed deeply by the time it is projected (layers pressed
    // through each other in a crushed fold): it is pushed back by the thickness at most, since a
    // deeper push throws the particle through further layers.
    const double violation = std::max(distance - c.gap, -h);
    if (violation >= 0) return;
    double denominator = 0;
    for (int i = 0; i < 4; ++i) denominator += w[p[i]] * weights[i] * weights[i];
    if (denominator < 1e-12) return;
    const double delta_lambda = -violation / denominator;
    for (int i = 0; i < 4; ++i) {
      if (w[p[i]] <= 0) continue;
      const Vec3 correction = (w[p[i]] * weights[i] * delta_lambda) * n;
      // SPEC "Proximity constraints": next to a contour a push against the untangling
      // displacement would widen the intersection, so it is dropped.
      if (rule && displacement->near_contour[p[i]] &&
          correction.dot(displacement->delta[p[i]]) < 0) {
        continue;
      }
      x[p[i]] += correction;
      output.proximity[p[i]] += correction;
      output.momentum_free[p[i]] += correction;
    }
  };
  // Few pairs (the usual case) are projected by one thread: a barrier per colour would cost more
  // than the projections. The order is the same either way (colour by colour, and the
  // constraints of one colour share no particle).
  if (proximity_.size() < kParallelProximity) {
#pragma omp single
    for (std::ptrdiff_t k = 0; k < static_cast<std::ptrdiff_t>(proximity_.size()); ++k) project(k);
    return;
  }
  for (std::size_t colour = 0; colour < proximity_colours_.colour_count(); ++colour) {
    const std::ptrdiff_t begin = proximity_colours_.offsets[colour];
    const std::ptrdiff_t end = proximity_colours_.offsets[colour + 1];
#pragma omp for schedule(static)
    for (std::ptrdiff_t k = begin; k < end; ++k) project(k);
  }
}

// A bent quad spans a tetrahedron between its two splits into triangles: a sheet inside it
// crosses one split and not the other. Each call moves the two diagonals of every quad toward
// each other by kFlattenPart of their offset along the quad's normal (the smallest move, weighted
// by inverse mass, of the four corners); a part, not all, so the stretch and the pushes still
// shape the quad.
void Solver::flatten_quads(const SolverInput& input, Positions& x) {
  const std::vector<double>& w = input.inverse_mass;
  for (const auto& [a, b, c, d] : *input.flat_quads) {
    Vec3 n = (x[c] - x[a]).cross(x[d] - x[b]);
    const double length = n.norm();
    const double weight = 0.25 * (w[a] + w[b] + w[c] + w[d]);
    if (!(length > 0) || !(weight > 0)) continue;
    n /= length;
    // The offset of diagonal b-d from diagonal a-c: their midpoints' along the normal.
    const double height = 0.5 * (x[b] + x[d] - x[a] - x[c]).dot(n);
    const Vec3 move = (kFlattenPart * height / (2 * weight)) * n;
    x[a] += w[a] * move;
    x[c] += w[c] * move;
    x[b] -= w[b] * move;
    x[d] -= w[d] * move;
  }
}

void Solver::solve(const SolverInput& input, Positions& x, SolverOutput& output) {
  const Settings& settings = input.settings;
  const std::vector<double>& w = input.inverse_mass;
  const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(x.size());
  const int iterations = settings.iterations;
  const double dt2 = settings.time_step * settings.time_step;
  const double stretch_alpha = settings.stretch_compliance / dt2;
  const double bending_alpha = settings.bending_compliance / dt2;
  const double margin = settings.thickness;
  const double limit = input.strain_limit;

  output.momentum_free.assign(x.size(), Vec3::Zero());
  output.proximity.assign(x.size(), Vec3::Zero());
  output.contact_depth.assign(x.size(), 0.0);
  output.contact_normal.assign(x.size(), Vec3::Zero());
  output.proximity_pairs = 0;
  output.proximity_seconds = 0;
  output.strain_limit_seconds = 0;
  std::fill(stretch_.lambda.begin(), stretch_.lambda.end(), 0.0);
  std::fill(bending_.lambda.begin(), bending_.lambda.end(), 0.0);

  const bool proximity = settings.proximity && settings.thickness > 0;
  proximity_.clear();
  proximity_colours_ = {};
  // Timed on the steady clock, as the untangler times the whole solve, so the part stays within
  // it (omp_get_wtime ticks in milliseconds on some platforms).
  auto search = [&] {
    const auto start = std::chrono::steady_clock::now();
    build_proximity(input, x);
    output.proximity_pairs += proximity_.size();
    output.proximity_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  if (proximity) search();

  const Displacement* displacement =
      input.displacement != nullptr && input.displacement->delta.size() == x.size()
          ? input.displacement
          : nullptr;
  const bool pull = input.pull_targets != nullptr && input.pull_targets->size() == x.size() &&
                    input.pull_stiffness > 0;
  // The pull closes pull_stiffness of the distance per frame, spread evenly over the iterations.
  const double pull_fraction =
      pull ? 1 - portable::root(1 - std::min(input.pull_stiffness, 1.0), iterations) : 0;

  // One thread team per iteration, not one per colour: the colours are small (a few hundred
  // constraints) and waking the team for each cost more than the projections themselves.
  const bool parallel = n > kParallelMinimum;
  for (int iteration = 0; iteration < iterations; ++iteration) {
    // Falling cloth moves a lot within one frame: the close pairs are found again halfway.
    if (proximity && iteration == iterations / 2 && iteration > 0) search();

#pragma omp parallel if (parallel)
    {
      // Stretch is cheap and carries the weight of the cloth: it gets kStretchSweeps sweeps per
      // iteration, alternating forward and backward through the colours (symmetric
      // Gauss-Seidel), which keeps a draped cloth near its rest lengths at 10 iterations.
      auto project = [&](DistanceConstraints& constraints, std::size_t colour, double alpha,
                         double relaxation) {
        const std::ptrdiff_t begin = constraints.offsets[colour];
        const std::ptrdiff_t end = constraints.offsets[colour + 1];
#pragma omp for schedule(static)
        for (std::ptrdiff_t k = begin; k < end; ++k) {
          const double compliance =
              input.soft_diagonals && constraints.diagonal[k] ? bending_alpha : alpha;
          project_distance(x, w, constraints.particles[k][0], constraints.particles[k][1],
                           constraints.rest[k], compliance, constraints.lambda[k], relaxation);
        }
      };
      const std::size_t stretch_colour_count = stretch_.colour_count();
      for (int sweep = 0; sweep < kStretchSweeps; ++sweep) {
        for (std::size_t step = 0; step < stretch_colour_count; ++step) {
          const std::size_t colour = sweep % 2 == 0 ? step : stretch_colour_count - 1 - step;
          project(stretch_, colour, stretch_alpha, kStretchRelaxation);
        }
      }
      for (std::size_t colour = 0; colour < bending_.colour_count(); ++colour) {
        project(bending_, colour, bending_alpha, 1.0);
      }
      // Pins: inverse mass 0, no constraint moves them.
      if (input.grab != nullptr) {
#pragma omp single
        {
          const GrabTargets& grab = *input.grab;
          for (std::size_t k = 0; k < grab.particles.size(); ++k) {
            const Index p = grab.particles[k];
            if (w[p] > 0) x[p] += grab.strengths[k] * (grab.targets[k] - x[p]);
          }
        }
      }
      if (displacement != nullptr || pull) {
        const double part = 1.0 / iterations;
#pragma omp for schedule(static)
        for (std::ptrdiff_t i = 0; i < n; ++i) {
          if (w[i] <= 0) continue;
          if (displacement != nullptr) {
            const Vec3 step = displacement->delta[i] * part;
            x[i] += step;
            if (!displacement->carries_momentum) output.momentum_free[i] += step;
          }
          if (pull) {
            const Vec3 step = pull_fraction * ((*input.pull_targets)[i] - x[i]);
            x[i] += step;
            output.momentum_free[i] += step;
          }
        }
      }
      if (proximity) project_proximity(input, x, output);
      if (input.flat_quads != nullptr && !input.flat_quads->empty()) {
        // Quads share corners: in order on one thread, so the result does not depend on the
        // thread count (a few thousand quads at most, a small part of an iteration).
#pragma omp single
        flatten_quads(input, x);
      }
      if (limit > 0) strain_limit_.project(w, limit, x);

#pragma omp for schedule(static)
      for (std::ptrdiff_t i = 0; i < n; ++i) {
        if (w[i] <= 0) continue;
        for (const Sphere& sphere : input.spheres) {
          const Vec3 d = x[i] - sphere.center;
          const double distance = d.norm();
          const double reach = sphere.radius + margin;
          if (distance >= reach || distance < 1e-12) continue;
          const Vec3 normal = d / distance;
          x[i] = sphere.center + reach * normal;
          output.contact_depth[i] += reach - distance;
          output.contact_normal[i] = normal;
        }
        if (input.ground_height) {
          const double floor = *input.ground_height + margin;
          if (x[i].z() < floor) {
            const double depth = floor - x[i].z();
            x[i].z() = floor;
            output.contact_depth[i] += depth;
            output.contact_normal[i] = Vec3::UnitZ();
          }
        }
      }
    }
  }
  if (limit > 0 && input.finish_strain_limit)
    output.strain_limit_seconds = finish_strain_limit(w, limit, x);
}

double Solver::finish_strain_limit(const std::vector<double>& inverse_mass, double limit,
                                   Positions& x) {
  const auto start = std::chrono::steady_clock::now();
  strain_limit_.finish(inverse_mass, limit, x,
                       static_cast<std::ptrdiff_t>(x.size()) > kParallelMinimum);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace untangle

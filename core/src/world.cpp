#include "untangle/world.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <utility>

#include "untangle/approach_filter.hpp"
#include "untangle/solver.hpp"
#include "untangle/thread_scope.hpp"

namespace untangle {
namespace {

// Below this many particles a loop runs on one thread: waking the team costs more.
constexpr std::ptrdiff_t kParallelMinimum = 2048;

void check_array(const Positions& values, std::size_t count, const char* what, bool allow_empty) {
  if (allow_empty && values.empty()) return;
  if (values.size() != count) {
    std::ostringstream out;
    out << what << " has " << values.size() << " entries, but the mesh has " << count
        << " vertices";
    throw std::invalid_argument(out.str());
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!values[i].allFinite()) {
      throw std::invalid_argument(std::string(what) + ": entry " + std::to_string(i) +
                                  " is not finite (NaN or Inf)");
    }
  }
}

double seconds_since(double start) {
  return omp_get_wtime() - start;
}

}  // namespace

// Detection's parts of the mesh only: a world that only detects (`untangle detect`, the viewport's
// Show Intersections) never pays for the vertex rows; the first step or grab builds them.
World::World(const Scene& scene)
    : World(ClothMesh::build(scene.pieces, MeshParts::kDetection), scene) {}

World::World(ClothMesh mesh, const Scene& scene)
    : mesh_(std::make_unique<ClothMesh>(std::move(mesh))), settings_(scene.settings) {
  validate(settings_);
  const std::size_t n = mesh_->vertex_count();
  check_array(scene.initial_positions, n, "initial_positions", true);
  check_array(scene.initial_velocities, n, "initial_velocities", true);
  if (!scene.inverse_mass.empty()) {
    if (scene.inverse_mass.size() != n) {
      throw std::invalid_argument("inverse_mass has " + std::to_string(scene.inverse_mass.size()) +
                                  " entries, but the mesh has " + std::to_string(n) + " vertices");
    }
    for (std::size_t i = 0; i < n; ++i) {
      const double w = scene.inverse_mass[i];
      if (!std::isfinite(w) || w < 0) {
        throw std::invalid_argument("inverse_mass: entry " + std::to_string(i) +
                                    " must be finite and >= 0, got " + std::to_string(w));
      }
    }
  }
  for (std::size_t s = 0; s < scene.spheres.size(); ++s) {
    const Sphere& sphere = scene.spheres[s];
    if (!sphere.center.allFinite() || !std::isfinite(sphere.radius) || !(sphere.radius > 0)) {
      throw std::invalid_argument("sphere " + std::to_string(s) +
                                  " needs a finite center and a radius > 0");
    }
  }
  if (scene.ground_height && !std::isfinite(*scene.ground_height)) {
    throw std::invalid_argument("ground_height must be finite");
  }

  positions_ = scene.initial_positions.empty() ? mesh_->rest_positions : scene.initial_positions;
  velocities_ =
      scene.initial_velocities.empty() ? Positions(n, Vec3::Zero()) : scene.initial_velocities;
  inverse_mass_ = scene.inverse_mass.empty() ? std::vector<double>(n, 1.0) : scene.inverse_mass;
  for (std::size_t i = 0; i < n; ++i) {
    if (inverse_mass_[i] <= 0) velocities_[i] = Vec3::Zero();
  }
  spheres_ = scene.spheres;
  ground_height_ = scene.ground_height;
  resolve_spacing();
  detection_ = std::make_unique<Detection>(*mesh_, positions_);
  response_ = make_response(settings_.method);
}

World::~World() = default;
World::World(World&&) noexcept = default;
World& World::operator=(World&&) noexcept = default;

void World::set_settings(const Settings& settings) {
  validate(settings);
  std::unique_ptr<Response> response =
      settings.method == settings_.method && response_ ? nullptr : make_response(settings.method);
  settings_ = settings;
  if (response) response_ = std::move(response);
  resolve_spacing();
}

void World::set_positions(const Positions& positions) {
  check_array(positions, mesh_->vertex_count(), "positions", false);
  positions_ = positions;
}

void World::set_velocities(const Positions& velocities) {
  check_array(velocities, mesh_->vertex_count(), "velocities", false);
  velocities_ = velocities;
  for (std::size_t i = 0; i < velocities_.size(); ++i) {
    if (inverse_mass_[i] <= 0) velocities_[i] = Vec3::Zero();
  }
}

void World::set_rest_shape(const Positions& rest) {
  check_array(rest, mesh_->vertex_count(), "rest shape", false);
  mesh_->set_rest_positions(rest);  // which triangles are degenerate may change
  if (solver_) solver_->update_rest();
  resolve_spacing();
}

void World::resolve_spacing() {
  spacing_ = settings_.spacing > 0 ? settings_.spacing : mesh_->mean_edge_length;
  frame_settings_ = settings_;
  // Above about half the spacing, particles two edges apart on a flat sheet become close pairs
  // whose pushes crumple it.
  frame_settings_.thickness = std::min(settings_.thickness, kMaxThicknessPerSpacing * spacing_);
}

void World::update_detection(const Positions& x) {
  detection_->run(x, frame_settings_.thickness, settings_.cull);
  const DetectionSeconds& seconds = detection_->seconds();
  stats_.seconds.refit = seconds.refit;
  stats_.seconds.broad = seconds.broad;
  stats_.seconds.narrow = seconds.narrow;
  stats_.seconds.contours = seconds.contours;
  const Intersections& found = detection_->intersections();
  stats_.pairs = found.pairs.size();
  stats_.hits = found.hits.size();
  stats_.dropped_hits = found.dropped_hits;
  stats_.contours_by_type = detection_->contours().count_by_type;
  stats_.culled_nodes = found.culled_nodes.size();
}

void World::detect() {
  ThreadScope threads(settings_.threads, mesh_->vertex_count());
  update_detection(positions_);
}

void World::step() {
  ThreadScope threads(settings_.threads, mesh_->vertex_count());
  mesh_->build_vertex_adjacency();  // the response, solver and velocities read the vertex rows
  const double frame_start = omp_get_wtime();
  const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(positions_.size());
  const double dt = settings_.time_step;
  const Vec3 gravity_step = dt * dt * settings_.gravity;
  stats_.seconds = {};

  // 1. Predict.
  double start = omp_get_wtime();
  const Positions previous = positions_;
  Positions x = positions_;
#pragma omp parallel for schedule(static) if (n > kParallelMinimum)
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    if (inverse_mass_[i] > 0) x[i] += dt * velocities_[i] + gravity_step;
  }
  stats_.seconds.predict = seconds_since(start);

  // 2-4. Refit, intersections, contours.
  update_detection(x);

  // 5. The untangling displacement.
  start = omp_get_wtime();
  displacement_ = {};
  if (settings_.untangle && response_) {
    displacement_ = response_->compute(
        ResponseInput{*mesh_, x, inverse_mass_, detection_->intersections(), detection_->contours(),
                      frame_settings_, spacing_, detection_->bvh(), &previous});
    if (!displacement_.delta.empty() && displacement_.delta.size() != x.size()) {
      throw std::logic_error("the response returned " + std::to_string(displacement_.delta.size()) +
                             " displacements for " + std::to_string(x.size()) + " particles");
    }
    // A response must never bring a NaN into the state; a non-finite entry moves nothing.
    for (Vec3& d : displacement_.delta) {
      if (!d.allFinite()) d = Vec3::Zero();
    }
    if (displacement_.near_contour.size() != x.size()) displacement_.near_contour.clear();
  }
  stats_.stuck_contours = displacement_.stuck_contours;
  stats_.seconds.response = seconds_since(start);

  // 6. Solver iterations. The solver is built on the first step (not timed as a stage): a world
  // that only detects (the untangler's check of the other quad split) never pays for its
  // constraint colouring and proximity tables.
  if (!solver_) solver_ = std::make_unique<Solver>(detection_->bvh());
  start = omp_get_wtime();
  GrabTargets grab;
  if (grabbed_ != kNoIndex && grab_target_) {
    grab.particles.push_back(grabbed_);
    grab.targets.push_back(*grab_target_);
    grab.strengths.push_back(1.0);
    for (std::size_t k = 0; k < grab_ring_.size(); ++k) {
      grab.particles.push_back(grab_ring_[k]);
      grab.targets.push_back(*grab_target_ + grab_offsets_[k]);
      grab.strengths.push_back(0.5);  // SPEC "Grab": neighbours at half strength
    }
  }
  SolverInput input{frame_settings_,
                    inverse_mass_,
                    previous,
                    spheres_,
                    ground_height_,
                    displacement_.empty() ? nullptr : &displacement_,
                    grab.particles.empty() ? nullptr : &grab};
  input.swept_proximity = true;
  SolverOutput output;
  solver_->solve(input, x, output);
  stats_.proximity_pairs = output.proximity_pairs;
  stats_.seconds.solve = seconds_since(start);
  stats_.seconds.proximity = output.proximity_seconds;

  // 7. Velocities.
  start = omp_get_wtime();
  std::size_t repaired = 0;
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    if (!x[i].allFinite()) {
      x[i] = previous[i];
      output.momentum_free[i] = output.proximity[i] = Vec3::Zero();
      ++repaired;
    }
  }
  stats_.repaired_particles = repaired;
  Positions raw(x.size());
#pragma omp parallel for schedule(static) if (n > kParallelMinimum)
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    if (inverse_mass_[i] <= 0) {
      raw[i] = Vec3::Zero();
      continue;
    }
    const Vec3 moved = (x[i] - previous[i]) / dt;
    Vec3 v = moved - output.momentum_free[i] / dt;
    // The proximity push gives no momentum, but an approach it stopped stays stopped: along the
    // push the velocity is at least 0 and at most what the particle really moved (inelastic).
    const double push = output.proximity[i].norm();
    if (push > 1e-15) {
      const Vec3 normal = output.proximity[i] / push;
      const double free_normal = v.dot(normal);
      const double moved_normal = std::max(moved.dot(normal), 0.0);
      const double kept = std::min(std::max(free_normal, 0.0), moved_normal);
      v += (kept - free_normal) * normal;
    }
    raw[i] = v;
  }
  // SPEC step 7: each velocity becomes the mean over the particle and its edge neighbours. The
  // particle itself is included, so a lone particle keeps its velocity and a rigid motion is kept.
  const Adjacency& neighbors = mesh_->vertex_neighbors;
  const double max_speed = settings_.max_speed;
  Positions velocities(x.size());  // the state changes only once nothing can throw
#pragma omp parallel for schedule(static) if (n > kParallelMinimum)
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    if (inverse_mass_[i] <= 0) {
      velocities[i] = Vec3::Zero();
      continue;
    }
    Vec3 sum = raw[i];
    const auto ring = neighbors[static_cast<Index>(i)];
    for (Index j : ring) sum += raw[j];
    Vec3 v = sum / static_cast<double>(ring.size() + 1);
    // Friction last, so the mean does not bring sliding back to a particle on the ground.
    if (output.contact_depth[i] > 0) {
      v = apply_friction(v, output.contact_normal[i], output.contact_depth[i], settings_.friction,
                         dt);
    }
    const double speed = v.norm();
    if (speed > max_speed) v *= max_speed / speed;
    velocities[i] = v;
  }
  // The next prediction must not carry a fold through another layer unseen (approach_filter.hpp).
  if (settings_.proximity && frame_settings_.thickness > 0) {
    filter_approach(
        solver_->proximity_search(),
        ApproachFilterInput{x, inverse_mass_, dt, frame_settings_.thickness, gravity_step, true},
        velocities);
  }
  positions_ = std::move(x);
  velocities_ = std::move(velocities);
  stats_.seconds.velocities = seconds_since(start);

  double energy = 0;
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    if (inverse_mass_[i] > 0) energy += 0.5 * velocities_[i].squaredNorm() / inverse_mass_[i];
  }
  stats_.kinetic_energy = energy;
  stats_.max_edge_strain =
      max_edge_strain(*mesh_, mesh_->rest_positions, positions_, StrainEdges::kAll);
  ++stats_.frame;
  stats_.seconds.total = seconds_since(frame_start);
}

bool World::grab_begin(const Vec3& origin, const Vec3& direction, double pick_radius) {
  if (!origin.allFinite() || !direction.allFinite() || !(direction.norm() > 0)) {
    throw std::invalid_argument("grab_begin needs a finite ray origin and a non-zero direction");
  }
  if (!std::isfinite(pick_radius) || pick_radius < 0) {
    throw std::invalid_argument("pick_radius must be finite and >= 0");
  }
  mesh_->build_vertex_adjacency();  // the grabbed particle's ring
  const Vec3 d = direction.normalized();
  Index best = kNoIndex;
  double best_t = 0;
  for (std::size_t i = 0; i < positions_.size(); ++i) {
    if (inverse_mass_[i] <= 0) continue;
    const Vec3 r = positions_[i] - origin;
    const double t = r.dot(d);
    if (t < 0) continue;
    if ((r - t * d).norm() > pick_radius) continue;
    if (best == kNoIndex || t < best_t) {
      best = static_cast<Index>(i);
      best_t = t;
    }
  }
  if (best == kNoIndex) return false;
  grabbed_ = best;
  grab_ring_.clear();
  grab_offsets_.clear();
  for (Index j : mesh_->vertex_ring[best]) {
    if (inverse_mass_[j] <= 0) continue;
    grab_ring_.push_back(j);
    grab_offsets_.push_back(positions_[j] - positions_[best]);
  }
  grab_target_.reset();
  return true;
}

void World::grab_move(const Vec3& target, const Vec3& plane_normal) {
  if (grabbed_ == kNoIndex) throw std::logic_error("grab_move called without a grab");
  if (!target.allFinite() || !plane_normal.allFinite() || !(plane_normal.norm() > 0)) {
    throw std::invalid_argument("grab_move needs a finite target and a non-zero plane normal");
  }
  // The drag plane goes through the particle and faces the camera.
  const Vec3 n = plane_normal.normalized();
  const Vec3& anchor = positions_[grabbed_];
  grab_target_ = target - (target - anchor).dot(n) * n;
}

void World::grab_end() {
  grabbed_ = kNoIndex;
  grab_ring_.clear();
  grab_offsets_.clear();
  grab_target_.reset();
}

}  // namespace untangle

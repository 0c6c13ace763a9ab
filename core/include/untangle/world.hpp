// World: the frame pipeline of the SPEC. Each step runs predict, BVH refit, intersections,
// contours, the untangling response, the XPBD solver iterations and the velocity update, and
// records FrameStats. Safe to use from one thread at a time; several worlds run in parallel.
#pragma once

#include <array>
#include <memory>

#include "untangle/detection.hpp"
#include "untangle/response.hpp"
#include "untangle/world_def.hpp"

namespace untangle {

struct StageSeconds {
  double predict = 0, refit = 0, broad = 0, narrow = 0, contours = 0, response = 0, solve = 0,
         velocities = 0, total = 0;
  double proximity = 0;  // the proximity searches, part of solve
};

struct FrameStats {
  std::size_t frame = 0;  // frames stepped so far
  std::size_t pairs = 0;  // intersecting triangle pairs found this frame (before the response)
  std::size_t hits = 0;
  std::size_t dropped_hits = 0;
  std::array<std::size_t, 3> contours_by_type{};  // loop, boundary, crease
  std::size_t culled_nodes = 0;
  std::size_t proximity_pairs = 0;
  std::size_t stuck_contours = 0;
  std::size_t repaired_particles = 0;  // non-finite after the solver: reset to the frame start
  double max_edge_strain = 0;          // max |length / rest - 1| over all edges after the frame
  double kinetic_energy = 0;           // sum of m v^2 / 2 after the frame
  StageSeconds seconds;
};

class Solver;

inline constexpr double kMaxThicknessPerSpacing = 0.5;

class World {
 public:
  // Throws MeshError for a bad mesh, std::invalid_argument for bad settings or array sizes.
  explicit World(const Scene& scene);
  // The same on a mesh built already (scene.pieces is not read): the untangler solves many
  // frames of one mesh that its caller has built and validated once. A mesh built for detection
  // only (MeshParts::kDetection, as the first constructor builds it) gets its vertex rows at the
  // first step or grab.
  World(ClothMesh mesh, const Scene& scene);
  ~World();
  World(World&&) noexcept;
  World& operator=(World&&) noexcept;

  void step();

  const ClothMesh& mesh() const { return *mesh_; }
  const Positions& positions() const { return positions_; }
  const Positions& velocities() const { return velocities_; }
  const std::vector<double>& inverse_mass() const { return inverse_mass_; }
  const Settings& settings() const { return settings_; }
  const FrameStats& stats() const { return stats_; }
  const Intersections& intersections() const { return detection_->intersections(); }
  const Contours& contours() const { return detection_->contours(); }
  const Bvh& bvh() const { return detection_->bvh(); }
  // The untangling displacement of the last frame (empty when untangling is off).
  const Displacement& displacement() const { return displacement_; }
  double spacing() const { return spacing_; }  // resolved particle spacing
  // The thickness a frame uses: settings().thickness, at most kMaxThicknessPerSpacing * spacing.
  double thickness() const { return frame_settings_.thickness; }

  // Validates first (std::invalid_argument); a failed call changes nothing.
  void set_settings(const Settings& settings);
  void set_positions(const Positions& positions);  // velocities are kept
  void set_velocities(const Positions& velocities);
  // A new rest shape for stretch, bending and the strain figures (the topology stays).
  void set_rest_shape(const Positions& rest);

  // Detect on the current positions without stepping (refit, intersections, contours).
  void detect();

  // Grab (SPEC "Grab"): picks the nearest free particle along the ray within pick_radius of it;
  // false when none. grab_move throws std::logic_error without a grab.
  bool grab_begin(const Vec3& origin, const Vec3& direction, double pick_radius);
  void grab_move(const Vec3& target, const Vec3& plane_normal);
  void grab_end();
  Index grabbed_particle() const { return grabbed_; }  // kNoIndex when none

 private:
  void update_detection(const Positions& x);
  void resolve_spacing();  // spacing_ and frame_settings_ from settings_ and the rest shape

  // Behind a pointer so that the BVH and the solver, which refer to it, survive a move.
  std::unique_ptr<ClothMesh> mesh_;
  Settings settings_;
  Settings frame_settings_;  // settings_ with the thickness the frame can use (resolve_spacing)
  Positions positions_;
  Positions velocities_;
  std::vector<double> inverse_mass_;
  std::vector<Sphere> spheres_;
  std::optional<double> ground_height_;
  std::unique_ptr<Detection> detection_;  // its BVH is shared with the solver
  std::unique_ptr<Solver> solver_;        // built by the first step
  std::unique_ptr<Response> response_;
  FrameStats stats_;
  Displacement displacement_;
  double spacing_ = 0;
  Index grabbed_ = kNoIndex;
  std::vector<Index> grab_ring_;
  Positions grab_offsets_;  // of the ring from the grabbed particle, at grab_begin
  std::optional<Vec3> grab_target_;
};

}  // namespace untangle

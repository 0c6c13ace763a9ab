// Solver: the XPBD iterations of one frame (Macklin, Mueller, Chentanez 2016): stretch along the
// edges, bending across interior edges (distance of the two opposite vertices), grab, the
// untangling displacement in small parts, proximity pairs, sphere and ground (their Coulomb
// friction acts on the velocities, see apply_friction). Constraint groups are coloured so each
// group runs in parallel deterministically.
#pragma once

#include <optional>

#include "untangle/colouring.hpp"
#include "untangle/gia.hpp"
#include "untangle/proximity.hpp"
#include "untangle/response.hpp"
#include "untangle/strain_limit.hpp"
#include "untangle/world_def.hpp"

namespace untangle {

// The grabbed particle and its ring, pulled toward their targets in every iteration.
struct GrabTargets {
  std::vector<Index> particles;  // [0] is the grabbed particle, then its ring
  Positions targets;
  std::vector<double> strengths;  // fraction of the remaining distance per iteration
};

struct SolverInput {
  const Settings& settings;
  const std::vector<double>& inverse_mass;
  const Positions& previous;  // positions at the start of the frame
  const std::vector<Sphere>& spheres;
  std::optional<double> ground_height;
  const Displacement* displacement = nullptr;  // null or empty: none
  const GrabTargets* grab = nullptr;
  const Positions* pull_targets = nullptr;  // null or empty: none
  double pull_stiffness = 0;                // fraction of the distance per frame
  // Quads (corners in order around the polygon) made flatter in every iteration, see
  // Solver::flatten_quads. Null or empty: none.
  const std::vector<std::array<Index, 4>>* flat_quads = nullptr;
  // The proximity searches also find the pairs that passed through each other on the way from
  // `previous` (ProximitySearch::find with `from`), held on the side they had there: a fold that
  // closes faster than the thickness per frame is stopped instead of crossing unseen.
  bool swept_proximity = false;
  // What only the untangler asks of a step (a scene's frames keep the defaults):
  // When above 0, every iteration ends by projecting each polygon edge (not the diagonals that
  // split a polygon) back into [1 - strain_limit, 1 + strain_limit] times its rest length
  // (strain limiting, Provot 1995): the pushes cannot stretch the cloth beyond it.
  double strain_limit = 0;
  // With a strain limit: the solve ends with sweeps until every polygon edge is within it
  // (finish_strain_limit). Off, the last iteration's projection is all (the untangler finishes
  // only the states it keeps).
  bool finish_strain_limit = true;
  // A pair found closer than the thickness is held at the gap it had when found (at least a
  // quarter of the thickness) instead of pushed out to the thickness: it keeps the layers from
  // crossing without stretching cloth that lies crushed (the untangler's relaxation).
  bool hold_gaps = false;
  // Proximity pairs also between primitives that share a polygon but no vertex (see
  // ProximitySearch): folds one polygon wide are held open with them.
  bool ring_pairs = false;
  // The diagonals that split polygons get the bending compliance instead of the stretch one, so
  // that the two splits of a quad (each with its own diagonal as a constraint) solve one cloth.
  bool soft_diagonals = false;
  // Global intersection analysis of the step's start: a proximity pair whose two sides lie in
  // opposite regions of one contour has passed through, and is pushed to the other side than
  // the one it is on (Baraff, Witkin & Kass 2003). Null: every pair keeps its side.
  const GlobalIntersections* regions = nullptr;
};

struct SolverOutput {
  // Per particle, the displacement that must not turn into velocity: proximity pushes, the pull
  // and an untangling displacement that carries no momentum.
  Positions momentum_free;
  Positions proximity;              // the proximity part of momentum_free
  std::size_t proximity_pairs = 0;  // pairs of the first and the second search together
  // Contacts with the sphere or the ground: the sum of the push-out depths over the iterations
  // and the last contact normal, for the friction applied to the velocities.
  std::vector<double> contact_depth;
  Positions contact_normal;
  double proximity_seconds = 0;
  double strain_limit_seconds = 0;  // the final strain-limit sweeps after the iterations
};

// Coulomb friction on the velocity of a particle that was pushed out of a collider by `depth`
// in total this frame (Bridson 2002, 7.2): the tangential speed drops by friction * depth / dt,
// and to 0 when it is smaller. On velocities rather than positions, so a stretched cloth on the
// ground can still relax within the frame.
Vec3 apply_friction(const Vec3& velocity, const Vec3& normal, double depth, double friction,
                    double time_step);

class Solver {
 public:
  // Rest lengths from the rest shape of the BVH's mesh; the proximity pairs are searched on the
  // BVH's trees. The BVH must outlive the solver.
  explicit Solver(const Bvh& bvh);

  // Takes the stretch and bending rest values, and the proximity search's detectable triangles,
  // from the mesh's rest shape again (after ClothMesh::set_rest_positions).
  void update_rest();

  // Runs settings.iterations iterations on x (the predicted positions on entry).
  void solve(const SolverInput& input, Positions& x, SolverOutput& output);

  // Gauss-Seidel sweeps over the polygon edges until each is within [1 - limit, 1 + limit] times
  // its rest length (to a small tolerance); returns the seconds they took.
  double finish_strain_limit(const std::vector<double>& inverse_mass, double limit, Positions& x);

  // The search the proximity pairs come from, for the velocity update's approach filter: it
  // walks the same trees and reuses what it can between the searches of a frame.
  ProximitySearch& proximity_search() { return proximity_search_; }

  std::size_t stretch_constraint_count() const { return stretch_.particles.size(); }
  std::size_t bending_constraint_count() const { return bending_.particles.size(); }

 private:
  struct ProximityConstraint {
    std::array<Index, 4> particles;  // point, triangle corners; or edge, edge
    bool point_triangle = true;
    Vec3 side;  // the side the pair was on at the start of the frame
    double gap =
        0;  // the distance it is kept at (the thickness, or less, see SolverInput::hold_gaps)
  };

  // Distance constraints in colour order: colour c is [offsets[c], offsets[c + 1]).
  struct DistanceConstraints {
    std::vector<std::array<Index, 2>> particles;
    std::vector<double> rest;
    std::vector<double> lambda;
    std::vector<std::uint8_t> diagonal;  // 1: splits a polygon (Settings::soft_diagonals)
    std::vector<Index> offsets;
    std::size_t colour_count() const { return offsets.empty() ? 0 : offsets.size() - 1; }
  };

  // diagonal: per constraint, or empty for none.
  static DistanceConstraints in_colour_order(const std::vector<std::array<Index, 2>>& particles,
                                             const std::vector<double>& rest,
                                             const std::vector<std::uint8_t>& diagonal,
                                             std::size_t particle_count);
  void build_proximity(const SolverInput& input, const Positions& x);
  static void flatten_quads(const SolverInput& input, Positions& x);
  // Runs its colours with orphaned `omp for`: called from inside the solve's thread team.
  void project_proximity(const SolverInput& input, Positions& x, SolverOutput& output) const;

  const ClothMesh* mesh_;
  DistanceConstraints stretch_;
  DistanceConstraints bending_;
  StrainLimit strain_limit_;  // for SolverInput::strain_limit
  ProximitySearch proximity_search_;
  std::vector<ProximityConstraint> proximity_;
  Colouring proximity_colours_;
};

}  // namespace untangle

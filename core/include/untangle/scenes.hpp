// Scenes: pure functions returning the description of the three reference scenes of the SPEC
// (tangled start, dropped cloth, two sheets). A description is also what the C ABI builds a
// world from when the caller brings its own meshes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "untangle/mesh.hpp"
#include "untangle/settings.hpp"

namespace untangle {

struct Sphere {
  Vec3 center = Vec3::Zero();
  double radius = 1;
};

struct Scene {
  std::string name;
  std::vector<PolygonMesh> pieces;   // positions here are the rest shape
  Positions initial_positions;       // empty = the rest shape
  Positions initial_velocities;      // empty = zero
  std::vector<double> inverse_mass;  // per global vertex, 0 = pinned; empty = all 1
  std::vector<Sphere> spheres;
  std::optional<double> ground_height;  // z of the ground plane (z is up)
  Settings settings;
  Index grid_columns = 0;  // for grid scenes: particles per row of each piece (0: not a grid)
  // A soft pull of every free particle toward these positions (the untangler's "keep the input
  // shape"), as a fraction of the remaining distance per frame; empty = none.
  Positions pull_targets;
  double pull_stiffness = 0;
};

Scene tangled_start();
Scene dropped_cloth();
Scene two_sheets();

// "tangled-start", "dropped-cloth", "two-sheets"; throws std::invalid_argument otherwise.
Scene make_scene(std::string_view name);

// Moves the scene's start (its initial positions, or the rest shape) by up to `fraction` of the
// particle spacing along each axis, uniformly at random from a generator seeded with `seed`:
// the same positions on every machine. Pinned particles stay. Seed 0 changes nothing. A result
// that changes with such a jitter hangs on float rounding (issue 19: rounding differs between
// CPUs).
void jitter_start(Scene& scene, std::uint64_t seed, double fraction = 1e-6);

}  // namespace untangle

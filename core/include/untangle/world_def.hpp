// World definition: the `Scene` a World is built from: cloth pieces with their rest shape and
// start state, pinned particles, sphere and ground colliders, and the settings. The demo scenes
// (scenes.hpp) and the C ABI's caller-built scenes both fill one in.
#pragma once

#include <optional>
#include <string>
#include <vector>

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
};

}  // namespace untangle

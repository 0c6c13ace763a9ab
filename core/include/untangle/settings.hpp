// Settings: every switch of the frame pipeline and the untangler in one plain struct, with a
// validator whose message names the field and the accepted range.
#pragma once

#include <optional>
#include <stdexcept>
#include <string_view>

#include "untangle/types.hpp"

namespace untangle {

enum class Method { kIcm = 0, kKikuchi = 1, kYe = 2, kBuffet = 3 };

std::string_view method_name(Method method);                    // "icm", "kikuchi", "ye", "buffet"
std::optional<Method> method_from_name(std::string_view name);  // nullopt when unknown

struct Settings {
  bool untangle = true;
  Method method = Method::kIcm;
  double response_strength = 1.0;  // h0 = response_strength * spacing
  double thickness = 0.01;         // proximity distance (SPEC: the scene's layer gap)
  bool proximity = true;
  int iterations = 10;            // XPBD iterations per frame
  double time_step = 1.0 / 60.0;  // seconds per frame
  Vec3 gravity = Vec3(0, 0, -9.81);
  double friction = 0.5;  // Coulomb coefficient on sphere and ground
  double stretch_compliance = 0.0;
  double bending_compliance = 1e-3;
  double max_speed = 10.0;  // m/s, per particle
  double spacing = 0.0;     // particle spacing; 0 = the mesh's mean rest edge length
  bool cull = true;         // normal-cone culling in the self test
  // A contour that stopped shrinking (a dead end, SPEC "known limits") gets a push that fades
  // out, so a scene does not push forever. The untangler turns this off: it raises the push
  // of a stalled solve instead.
  bool fade_stuck_contours = true;
  // A pair found closer than the thickness is held at the gap it had when found (at least a
  // quarter of the thickness) instead of pushed out to the thickness: it keeps the layers from
  // crossing without stretching cloth that lies crushed (the untangler's relaxation).
  bool proximity_holds_gap = false;
  // When above 0, every iteration ends by projecting each polygon edge (not the diagonals that
  // split a polygon) back into [1 - strain_limit, 1 + strain_limit] times its rest length
  // (strain limiting, Provot 1995): the untangler's pushes cannot stretch the cloth beyond it.
  double strain_limit = 0;
  // Proximity pairs also between primitives that share a polygon but no vertex (see
  // ProximitySearch): the untangler holds folds one polygon wide open with them.
  bool proximity_ring_pairs = false;
  // The diagonals that split polygons into triangles get the bending compliance instead of the
  // stretch one. The untangler runs frames on both splits of each quad, and each split has its
  // own diagonal as a stretch constraint and the other as a bending one: with both soft the two
  // splits solve the same cloth (a stiff diagonal snapped a quad crushed along it back in one
  // frame of the other split, and brought back a hundred pairs).
  bool soft_diagonals = false;
  int threads = 0;  // 0 = OpenMP's default
};

// Throws std::invalid_argument naming the field, e.g. "thickness must be in [0, 1], got -2".
void validate(const Settings& settings);

}  // namespace untangle

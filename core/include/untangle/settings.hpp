// Settings: every switch of the frame pipeline in one plain struct, with a validator whose message
// names the field and the accepted range.
#pragma once

#include <optional>
#include <span>
#include <stdexcept>
#include <string_view>

#include "untangle/types.hpp"

namespace untangle {

enum class Method { kIcm = 0, kKikuchi = 1, kYe = 2, kBuffet = 3 };

std::string_view method_name(Method method);                    // "icm", "kikuchi", "ye", "buffet"
std::optional<Method> method_from_name(std::string_view name);  // nullopt when unknown
// Every method's name, in the order of Method's values: the one list the C ABI, the CLI and the
// add-on read.
std::span<const std::string_view> method_names();

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
  int threads = 0;          // 0 = OpenMP's default
};

// Throws std::invalid_argument naming the field, e.g. "thickness must be in [0, 1000], got -2".
void validate(const Settings& settings);

}  // namespace untangle

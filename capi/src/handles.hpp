// The objects behind the opaque handles of untangle.h and the conversions between the ABI's
// float arrays and size-prefixed structs and the engine's types. Internal to libuntangle.
#pragma once

#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "untangle.h"
#include "untangle/untangler.hpp"
#include "untangle/world.hpp"
#include "untangle/world_def.hpp"

// A scene description being assembled piece by piece (global namespace: untangle.h declares
// the handle types there).
struct UtScene {
  std::vector<untangle::PolygonMesh> pieces;
  std::vector<std::vector<double>> inverse_mass;  // per piece; empty = all 1
  std::vector<untangle::Sphere> spheres;
  std::optional<double> ground_height;
};

struct UtWorld {
  std::unique_ptr<untangle::World> world;
  // The input polygons per piece (positions dropped): the ClothMesh keeps only triangles.
  std::vector<untangle::PolygonMesh> topology;
  std::vector<untangle::Sphere> spheres;
  std::optional<double> ground_height;
  double build_ms = 0;
};

namespace untangle::capi {

// Throws std::invalid_argument "<name> is NULL" for a NULL pointer.
template <class T>
T* require(T* pointer, const char* name) {
  if (pointer == nullptr) throw std::invalid_argument(std::string(name) + " is NULL");
  return pointer;
}

// xyz float triples `stride` bytes apart (0 = packed) to and from the engine's doubles.
// read_xyz with check_finite throws std::invalid_argument naming the first bad vertex;
// write_xyz throws (internal error) rather than let a NaN leave the library.
Positions read_xyz(const float* data, std::size_t count, std::size_t stride, const char* what,
                   bool check_finite);
void write_xyz(const Vec3* values, std::size_t count, float* out, std::size_t stride);

// The sizes a caller's struct may have: at least its struct_size field, at most ours.
void check_struct_size(std::uint32_t size, std::size_t ours, const char* name);

// Settings: a NULL pointer gives the defaults. Throws std::invalid_argument for an unknown
// method, a boolean that is not 0 or 1, or a value validate() refuses.
Settings settings_from_c(const UtSettings* settings);
void settings_to_c(const Settings& settings, UtSettings* out);

// What UtUntangleOptions says beyond the engine's UntangleOptions: how the C ABI runs the call.
struct CallSwitches {
  bool independent = false;       // a sequence's frames each on their own
  bool keep_seams_apart = false;  // no sewing of seams before the untangler
};
UntangleOptions options_from_c(const UtUntangleOptions* options, CallSwitches* switches);
void options_to_c(const UntangleOptions& options, bool independent, UtUntangleOptions* out);
void report_to_c(const UntangleReport& report, UtUntangleReport* out);

// The part of FrameStats that comes from a mesh, then the rest from a frame.
void stats_to_c(const ClothMesh& mesh, const FrameStats& frame, std::size_t candidate_pairs,
                double build_ms, UtFrameStats* out);

// The pieces' positions in global order.
Positions concatenated_positions(const std::vector<PolygonMesh>& pieces);
// The per-vertex inverse masses of a scene (empty when no piece gave any).
std::vector<double> concatenated_inverse_mass(const UtScene& scene);

}  // namespace untangle::capi

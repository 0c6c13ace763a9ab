// Conversions at the edge of the ABI: float arrays with strides, and size-prefixed structs of
// which an older caller may know only a prefix.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "handles.hpp"

namespace untangle::capi {
namespace {

template <class Struct, class Field>
std::size_t end_of(const Struct& probe, Field Struct::*member) {
  const auto* base = reinterpret_cast<const char*>(&probe);
  const auto* field = reinterpret_cast<const char*>(&(probe.*member));
  return static_cast<std::size_t>(field - base) + sizeof(Field);
}

// The bytes of the fields lying wholly inside the first `size` bytes of Struct. The members
// are listed in declaration order, so these fields form a prefix.
template <class Struct, class... Fields>
std::size_t covered_prefix(std::size_t size, Fields Struct::*... members) {
  static const Struct probe{};
  std::size_t covered = 0;
  ((covered = end_of(probe, members) <= size ? std::max(covered, end_of(probe, members)) : covered),
   ...);
  return covered;
}

std::size_t settings_prefix(std::size_t size) {
  return covered_prefix<UtSettings>(
      size, &UtSettings::struct_size, &UtSettings::method, &UtSettings::untangle,
      &UtSettings::proximity, &UtSettings::cull, &UtSettings::iterations, &UtSettings::threads,
      &UtSettings::reserved, &UtSettings::response_strength, &UtSettings::thickness,
      &UtSettings::time_step, &UtSettings::gravity, &UtSettings::friction, &UtSettings::max_speed,
      &UtSettings::stretch_compliance, &UtSettings::bending_compliance, &UtSettings::spacing);
}

std::size_t options_prefix(std::size_t size) {
  return covered_prefix<UtUntangleOptions>(
      size, &UtUntangleOptions::struct_size, &UtUntangleOptions::max_iterations,
      &UtUntangleOptions::pull_stiffness, &UtUntangleOptions::independent,
      &UtUntangleOptions::keep_seams_apart, &UtUntangleOptions::strain_limit);
}

std::size_t report_prefix(std::size_t size) {
  using R = UtUntangleReport;
  return covered_prefix<R>(size, &R::struct_size, &R::iterations, &R::pairs_before, &R::pairs_after,
                           &R::contours_loop, &R::contours_boundary, &R::contours_crease,
                           &R::cancelled, &R::reserved, &R::max_displacement, &R::mean_displacement,
                           &R::max_edge_strain, &R::seconds, &R::iterations_to_clean, &R::reserved2,
                           &R::seconds_detection, &R::seconds_analysis, &R::seconds_response,
                           &R::seconds_solver, &R::seconds_proximity, &R::seconds_strain_limit);
}

std::size_t stats_prefix(std::size_t size) {
  using S = UtFrameStats;
  return covered_prefix<S>(size, &S::struct_size, &S::reserved, &S::frame, &S::triangles, &S::pairs,
                           &S::hits, &S::dropped_hits, &S::contours_loop, &S::contours_boundary,
                           &S::contours_crease, &S::culled_nodes, &S::candidate_pairs,
                           &S::proximity_pairs, &S::stuck_contours, &S::degenerate_triangles,
                           &S::duplicate_triangles, &S::non_manifold_edges, &S::max_edge_strain,
                           &S::kinetic_energy, &S::ms_predict, &S::ms_refit, &S::ms_broad,
                           &S::ms_narrow, &S::ms_contours, &S::ms_response, &S::ms_solve,
                           &S::ms_velocities, &S::ms_total, &S::ms_build);
}

// Writes the fields of `full` that lie inside the caller's struct_size, keeping that size.
template <class Struct>
void write_prefix(const Struct& full, Struct* out, std::size_t prefix) {
  const std::uint32_t size = out->struct_size;
  std::memcpy(out, &full, prefix);
  out->struct_size = size;
}

bool boolean_field(std::int32_t value, const char* name) {
  if (value != 0 && value != 1) {
    throw std::invalid_argument(std::string("settings.") + name + " must be 0 or 1, got " +
                                std::to_string(value));
  }
  return value == 1;
}

}  // namespace

Positions read_xyz(const float* data, std::size_t count, std::size_t stride, const char* what,
                   bool check_finite) {
  if (stride != 0 && stride < 3 * sizeof(float)) {
    throw std::invalid_argument(std::string(what) + ": stride must be 0 (packed) or at least " +
                                "12 bytes, got " + std::to_string(stride));
  }
  if (count > 0) require(data, what);
  const std::size_t step = stride == 0 ? 3 * sizeof(float) : stride;
  const auto* bytes = reinterpret_cast<const unsigned char*>(data);
  Positions result(count);
  for (std::size_t i = 0; i < count; ++i) {
    float xyz[3];
    std::memcpy(xyz, bytes + i * step, sizeof xyz);  // the caller's rows need not be aligned
    result[i] = Vec3(xyz[0], xyz[1], xyz[2]);
    if (check_finite && !result[i].allFinite()) {
      std::ostringstream message;
      message << what << ": vertex " << i << " is not finite (" << xyz[0] << ", " << xyz[1] << ", "
              << xyz[2] << ")";
      throw std::invalid_argument(message.str());
    }
  }
  return result;
}

void write_xyz(const Vec3* values, std::size_t count, float* out, std::size_t stride) {
  if (stride != 0 && stride < 3 * sizeof(float)) {
    throw std::invalid_argument("stride must be 0 (packed) or at least 12 bytes, got " +
                                std::to_string(stride));
  }
  for (std::size_t i = 0; i < count; ++i) {
    if (!values[i].allFinite()) {
      throw std::runtime_error("the engine holds a non-finite value at vertex " +
                               std::to_string(i));
    }
  }
  if (count > 0) require(out, "output array");
  const std::size_t step = stride == 0 ? 3 * sizeof(float) : stride;
  auto* bytes = reinterpret_cast<unsigned char*>(out);
  for (std::size_t i = 0; i < count; ++i) {
    const float xyz[3] = {static_cast<float>(values[i].x()), static_cast<float>(values[i].y()),
                          static_cast<float>(values[i].z())};
    std::memcpy(bytes + i * step, xyz, sizeof xyz);
  }
}

void check_struct_size(std::uint32_t size, std::size_t ours, const char* name) {
  if (size < sizeof(std::uint32_t) || size > ours) {
    throw std::invalid_argument(std::string(name) + ".struct_size is " + std::to_string(size) +
                                ", but this library accepts " +
                                std::to_string(sizeof(std::uint32_t)) + " to " +
                                std::to_string(ours) + " bytes (set it to sizeof(" + name + "))");
  }
}

Settings settings_from_c(const UtSettings* settings) {
  Settings result;
  if (settings == nullptr) return result;
  check_struct_size(settings->struct_size, sizeof(UtSettings), "UtSettings");
  UtSettings full{};
  full.struct_size = sizeof(UtSettings);
  settings_to_c(result, &full);  // the defaults for fields an older caller does not know
  std::memcpy(&full, settings, settings_prefix(settings->struct_size));
  const std::span<const std::string_view> methods = method_names();
  if (full.method < 0 || static_cast<std::size_t>(full.method) >= methods.size()) {
    std::string known;  // "0 (icm), 1 (kikuchi), 2 (ye) or 3 (buffet)"
    for (std::size_t i = 0; i < methods.size(); ++i) {
      if (i > 0) known += i + 1 == methods.size() ? " or " : ", ";
      known += std::to_string(i) + " (" + std::string(methods[i]) + ")";
    }
    throw std::invalid_argument("settings.method must be " + known + ", got " +
                                std::to_string(full.method));
  }
  result.method = static_cast<Method>(full.method);
  result.untangle = boolean_field(full.untangle, "untangle");
  result.proximity = boolean_field(full.proximity, "proximity");
  result.cull = boolean_field(full.cull, "cull");
  result.iterations = full.iterations;
  result.threads = full.threads;
  result.response_strength = full.response_strength;
  result.thickness = full.thickness;
  result.time_step = full.time_step;
  result.gravity = Vec3(full.gravity[0], full.gravity[1], full.gravity[2]);
  result.friction = full.friction;
  result.max_speed = full.max_speed;
  result.stretch_compliance = full.stretch_compliance;
  result.bending_compliance = full.bending_compliance;
  result.spacing = full.spacing;
  validate(result);
  return result;
}

void settings_to_c(const Settings& settings, UtSettings* out) {
  UtSettings full{};
  full.struct_size = sizeof(UtSettings);
  full.method = static_cast<std::int32_t>(settings.method);
  full.untangle = settings.untangle ? 1 : 0;
  full.proximity = settings.proximity ? 1 : 0;
  full.cull = settings.cull ? 1 : 0;
  full.iterations = settings.iterations;
  full.threads = settings.threads;
  full.response_strength = settings.response_strength;
  full.thickness = settings.thickness;
  full.time_step = settings.time_step;
  for (int axis = 0; axis < 3; ++axis) full.gravity[axis] = settings.gravity[axis];
  full.friction = settings.friction;
  full.max_speed = settings.max_speed;
  full.stretch_compliance = settings.stretch_compliance;
  full.bending_compliance = settings.bending_compliance;
  full.spacing = settings.spacing;
  write_prefix(full, out, settings_prefix(out->struct_size));
}

UntangleOptions options_from_c(const UtUntangleOptions* options, CallSwitches* switches) {
  UntangleOptions result;
  UtUntangleOptions full{};
  full.struct_size = sizeof(UtUntangleOptions);
  options_to_c(result, false, &full);
  if (options != nullptr) {
    check_struct_size(options->struct_size, sizeof(UtUntangleOptions), "UtUntangleOptions");
    std::memcpy(&full, options, options_prefix(options->struct_size));
  }
  if (full.max_iterations < 1 || full.max_iterations > 1000000) {
    throw std::invalid_argument("options.max_iterations must be in [1, 1000000], got " +
                                std::to_string(full.max_iterations));
  }
  if (!(full.pull_stiffness >= 0 && full.pull_stiffness <= 1)) {
    std::ostringstream message;
    message << "options.pull_stiffness must be in [0, 1], got " << full.pull_stiffness;
    throw std::invalid_argument(message.str());
  }
  if (!(full.strain_limit >= 0 && full.strain_limit <= 1)) {
    std::ostringstream message;
    message << "options.strain_limit must be in [0, 1], got " << full.strain_limit;
    throw std::invalid_argument(message.str());
  }
  if (full.independent != 0 && full.independent != 1) {
    throw std::invalid_argument("options.independent must be 0 or 1, got " +
                                std::to_string(full.independent));
  }
  if (full.keep_seams_apart != 0 && full.keep_seams_apart != 1) {
    throw std::invalid_argument("options.keep_seams_apart must be 0 or 1, got " +
                                std::to_string(full.keep_seams_apart));
  }
  result.max_iterations = full.max_iterations;
  result.pull_stiffness = full.pull_stiffness;
  result.strain_limit = full.strain_limit;
  if (switches != nullptr) {
    switches->independent = full.independent == 1;
    switches->keep_seams_apart = full.keep_seams_apart == 1;
  }
  return result;
}

void options_to_c(const UntangleOptions& options, bool independent, UtUntangleOptions* out) {
  UtUntangleOptions full{};
  full.max_iterations = options.max_iterations;
  full.pull_stiffness = options.pull_stiffness;
  full.independent = independent ? 1 : 0;
  full.strain_limit = options.strain_limit;
  write_prefix(full, out, options_prefix(out->struct_size));
}

void report_to_c(const UntangleReport& report, UtUntangleReport* out) {
  UtUntangleReport full{};
  full.iterations = report.iterations;
  full.pairs_before = report.pairs_before;
  full.pairs_after = report.pairs_after;
  full.contours_loop = report.contours_left[0];
  full.contours_boundary = report.contours_left[1];
  full.contours_crease = report.contours_left[2];
  full.cancelled = report.cancelled ? 1 : 0;
  full.max_displacement = report.max_displacement;
  full.mean_displacement = report.mean_displacement;
  full.max_edge_strain = report.max_edge_strain;
  full.seconds = report.seconds;
  full.iterations_to_clean = report.iterations_to_clean;
  full.seconds_detection = report.stage_seconds.detection;
  full.seconds_analysis = report.stage_seconds.analysis;
  full.seconds_response = report.stage_seconds.response;
  full.seconds_solver = report.stage_seconds.solver;
  full.seconds_proximity = report.stage_seconds.proximity;
  full.seconds_strain_limit = report.stage_seconds.strain_limit;
  write_prefix(full, out, report_prefix(out->struct_size));
}

void stats_to_c(const ClothMesh& mesh, const FrameStats& frame, std::size_t candidate_pairs,
                double build_ms, UtFrameStats* out) {
  UtFrameStats full{};
  full.frame = frame.frame;
  full.triangles = mesh.triangle_count();
  full.pairs = frame.pairs;
  full.hits = frame.hits;
  full.dropped_hits = frame.dropped_hits;
  full.contours_loop = frame.contours_by_type[0];
  full.contours_boundary = frame.contours_by_type[1];
  full.contours_crease = frame.contours_by_type[2];
  full.culled_nodes = frame.culled_nodes;
  full.candidate_pairs = candidate_pairs;
  full.proximity_pairs = frame.proximity_pairs;
  full.stuck_contours = frame.stuck_contours;
  full.degenerate_triangles = mesh.report.degenerate_triangles;
  full.duplicate_triangles = mesh.report.duplicate_triangles;
  full.non_manifold_edges = mesh.report.non_manifold_edges;
  full.max_edge_strain = frame.max_edge_strain;
  full.kinetic_energy = frame.kinetic_energy;
  const StageSeconds& s = frame.seconds;
  full.ms_predict = 1e3 * s.predict;
  full.ms_refit = 1e3 * s.refit;
  full.ms_broad = 1e3 * s.broad;
  full.ms_narrow = 1e3 * s.narrow;
  full.ms_contours = 1e3 * s.contours;
  full.ms_response = 1e3 * s.response;
  full.ms_solve = 1e3 * s.solve;
  full.ms_velocities = 1e3 * s.velocities;
  full.ms_total = 1e3 * s.total;
  full.ms_build = build_ms;
  write_prefix(full, out, stats_prefix(out->struct_size));
}

Positions concatenated_positions(const std::vector<PolygonMesh>& pieces) {
  Positions result;
  for (const PolygonMesh& piece : pieces) {
    result.insert(result.end(), piece.positions.begin(), piece.positions.end());
  }
  return result;
}

std::vector<double> concatenated_inverse_mass(const UtScene& scene) {
  const bool any = std::any_of(scene.inverse_mass.begin(), scene.inverse_mass.end(),
                               [](const std::vector<double>& masses) { return !masses.empty(); });
  std::vector<double> result;
  if (!any) return result;
  for (std::size_t p = 0; p < scene.pieces.size(); ++p) {
    if (scene.inverse_mass[p].empty()) {
      result.insert(result.end(), scene.pieces[p].positions.size(), 1.0);
    } else {
      result.insert(result.end(), scene.inverse_mass[p].begin(), scene.inverse_mass[p].end());
    }
  }
  return result;
}

}  // namespace untangle::capi

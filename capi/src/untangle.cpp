// Detect-only and the untangler (one state, or a sequence frame by frame) behind the ABI.
#include <chrono>
#include <cstring>
#include <span>
#include <vector>

#include "guard.hpp"
#include "handles.hpp"
#include "untangle/detection.hpp"
#include "untangle/thread_scope.hpp"
#include "untangle/weld.hpp"

using untangle::capi::guard;
using untangle::capi::require;

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

untangle::Progress progress_of(UtProgressFn progress, void* user_data) {
  if (progress == nullptr) return {};
  return [progress, user_data](int done, int total, std::size_t pairs) {
    return progress(user_data, done, total, static_cast<std::uint64_t>(pairs)) != 0;
  };
}

std::size_t total_vertices(const UtScene& scene) {
  std::size_t total = 0;
  for (const untangle::PolygonMesh& piece : scene.pieces) total += piece.positions.size();
  return total;
}

void check_vertex_count(const UtScene& scene, std::size_t given, const char* what) {
  const std::size_t expected = total_vertices(scene);
  if (given != expected) {
    throw std::invalid_argument(std::string(what) + ": vertex_count is " + std::to_string(given) +
                                ", but the scene's pieces have " + std::to_string(expected) +
                                " vertices");
  }
}

void check_report_size(const UtUntangleReport* report) {
  if (report != nullptr) {
    untangle::capi::check_struct_size(report->struct_size, sizeof(UtUntangleReport),
                                      "UtUntangleReport");
  }
}

}  // namespace

extern "C" {

UT_API UtStatus ut_untangle_options_init(UtUntangleOptions* options, size_t struct_size) {
  return guard([&] {
    require(options, "options");
    if (struct_size > UINT32_MAX) struct_size = UINT32_MAX;  // refused below with its size
    untangle::capi::check_struct_size(static_cast<std::uint32_t>(struct_size),
                                      sizeof(UtUntangleOptions), "UtUntangleOptions");
    options->struct_size = static_cast<std::uint32_t>(struct_size);
    untangle::capi::options_to_c(untangle::UntangleOptions{}, false, options);
  });
}

UT_API UtStatus ut_detect(const UtScene* scene, const UtSettings* settings, UtFrameStats* stats,
                          uint8_t* polygon_flags, size_t polygon_count) {
  return guard([&] {
    const UtScene& source = *require(scene, "scene");
    const untangle::Settings options = untangle::capi::settings_from_c(settings);
    if (stats != nullptr) {
      untangle::capi::check_struct_size(stats->struct_size, sizeof(UtFrameStats), "UtFrameStats");
    }
    std::size_t faces = 0;
    for (const untangle::PolygonMesh& piece : source.pieces) faces += piece.face_sizes.size();
    if (polygon_flags != nullptr && polygon_count != faces) {
      throw std::invalid_argument("polygon_count is " + std::to_string(polygon_count) +
                                  ", but the scene's pieces have " + std::to_string(faces) +
                                  " faces");
    }
    std::size_t vertices = 0;
    for (const untangle::PolygonMesh& piece : source.pieces) vertices += piece.positions.size();
    untangle::ThreadScope threads(options.threads, vertices);

    const auto build_start = Clock::now();
    // Detection reads no vertex rows: they are left out (MeshParts::kDetection).
    const untangle::ClothMesh mesh =
        untangle::ClothMesh::build(source.pieces, untangle::MeshParts::kDetection);
    const untangle::Positions positions = untangle::capi::concatenated_positions(source.pieces);
    untangle::Detection detection(mesh, positions);
    const double build_ms = ms_since(build_start);

    detection.run(positions, 0.0, options.cull);
    const untangle::Intersections& found = detection.intersections();
    const untangle::DetectionSeconds& seconds = detection.seconds();
    untangle::FrameStats frame;
    frame.pairs = found.pairs.size();
    frame.hits = found.hits.size();
    frame.dropped_hits = found.dropped_hits;
    frame.contours_by_type = detection.contours().count_by_type;
    frame.culled_nodes = found.culled_nodes.size();
    frame.seconds.refit = seconds.refit;
    frame.seconds.broad = seconds.broad;
    frame.seconds.narrow = seconds.narrow;
    frame.seconds.contours = seconds.contours;
    frame.seconds.total = seconds.total();

    if (polygon_flags != nullptr) {
      std::memset(polygon_flags, 0, polygon_count);
      for (const auto& pair : found.pairs) {
        for (untangle::Index t : pair) polygon_flags[mesh.triangle_polygon.at(t)] = 1;
      }
    }
    if (stats != nullptr) {
      untangle::capi::stats_to_c(mesh, frame, found.candidate_pairs, build_ms, stats);
    }
  });
}

UT_API UtStatus ut_untangle(const UtScene* scene, const UtSettings* settings,
                            const UtUntangleOptions* options, const float* rest, float* output,
                            size_t vertex_count, UtUntangleReport* report, UtProgressFn progress,
                            void* user_data) {
  return guard([&] {
    const UtScene& source = *require(scene, "scene");
    require(output, "output");
    check_vertex_count(source, vertex_count, "ut_untangle");
    check_report_size(report);
    untangle::capi::CallSwitches switches;
    untangle::UntangleOptions untangle_options = untangle::capi::options_from_c(options, &switches);
    untangle_options.settings = untangle::capi::settings_from_c(settings);
    untangle::Positions rest_shape;
    if (rest != nullptr) rest_shape = untangle::capi::read_xyz(rest, vertex_count, 0, "rest", true);

    // Seams (copies of a vertex along coincident border edges: sewn panels, split seams) are
    // sewn for the untangler; their copies must coincide in the rest shape too.
    const untangle::Positions* const agree[] = {&rest_shape};
    const untangle::Weld weld =
        switches.keep_seams_apart
            ? untangle::unsewn(source.pieces)
            : untangle::sew_seams(source.pieces,
                                  rest != nullptr ? std::span(agree)
                                                  : std::span<const untangle::Positions* const>());
    untangle_options.inverse_mass =
        weld.to_welded_inverse_mass(untangle::capi::concatenated_inverse_mass(source));
    if (rest != nullptr) rest_shape = weld.to_welded(rest_shape);
    const untangle::ClothMesh mesh = untangle::ClothMesh::build(weld.pieces);
    const untangle::Positions input = untangle::capi::concatenated_positions(weld.pieces);
    untangle::Positions welded_result;
    const untangle::UntangleReport outcome =
        untangle::untangle(mesh, input, rest != nullptr ? &rest_shape : nullptr, untangle_options,
                           welded_result, progress_of(progress, user_data));
    if (welded_result.size() != mesh.vertex_count()) {
      throw std::runtime_error("the untangler returned " + std::to_string(welded_result.size()) +
                               " positions for " + std::to_string(mesh.vertex_count()) +
                               " vertices");
    }
    const untangle::Positions result = weld.to_input(welded_result);
    untangle::capi::write_xyz(result.data(), result.size(), output, 0);
    if (report != nullptr) untangle::capi::report_to_c(outcome, report);
    if (outcome.cancelled) {
      throw untangle::capi::Cancelled(
          "cancelled by the progress callback after " + std::to_string(outcome.iterations) +
          " of " + std::to_string(untangle_options.max_iterations) + " iterations");
    }
  });
}

UT_API UtStatus ut_untangle_sequence(const UtScene* scene, const UtSettings* settings,
                                     const UtUntangleOptions* options, const float* frames,
                                     size_t frame_count, size_t vertex_count, float* output,
                                     UtUntangleReport* reports, size_t* frames_done,
                                     UtProgressFn progress, void* user_data) {
  return guard([&] {
    const UtScene& source = *require(scene, "scene");
    check_vertex_count(source, vertex_count, "ut_untangle_sequence");
    if (frame_count > 0) {
      require(frames, "frames");
      require(output, "output");
    } else {
      reports = nullptr;  // an empty array: reports[0] is not the caller's
    }
    check_report_size(reports);
    const std::size_t report_stride = reports != nullptr ? reports->struct_size : 0;
    untangle::capi::CallSwitches switches;
    untangle::UntangleOptions untangle_options = untangle::capi::options_from_c(options, &switches);
    const bool independent = switches.independent;
    untangle_options.settings = untangle::capi::settings_from_c(settings);

    std::vector<untangle::Positions> input(frame_count);
    for (std::size_t f = 0; f < frame_count; ++f) {
      const std::string what = "frame " + std::to_string(f);
      input[f] = untangle::capi::read_xyz(frames + 3 * vertex_count * f, vertex_count, 0,
                                          what.c_str(), true);
    }

    // Seams are sewn by the positions of every frame. The scene's own positions are not the
    // input here: frame 0 stands in for them.
    std::vector<untangle::PolygonMesh> topology = source.pieces;
    if (!input.empty()) {
      std::size_t v = 0;
      for (untangle::PolygonMesh& piece : topology) {
        for (untangle::Vec3& p : piece.positions) p = input[0][v++];
      }
    }
    std::vector<const untangle::Positions*> agree;
    for (const untangle::Positions& frame : input) agree.push_back(&frame);
    const untangle::Weld weld = switches.keep_seams_apart ? untangle::unsewn(topology)
                                                          : untangle::sew_seams(topology, agree);
    untangle_options.inverse_mass =
        weld.to_welded_inverse_mass(untangle::capi::concatenated_inverse_mass(source));
    for (untangle::Positions& frame : input) frame = weld.to_welded(frame);
    const untangle::ClothMesh mesh = untangle::ClothMesh::build(weld.pieces);
    std::vector<untangle::Positions> result;
    const untangle::SequenceReport outcome = untangle::untangle_sequence(
        mesh, input, untangle_options, independent, result, progress_of(progress, user_data));
    const std::size_t finished = std::min(outcome.frames.size(), result.size());
    for (std::size_t f = 0; f < finished; ++f) {
      if (result[f].size() != mesh.vertex_count()) {
        throw std::runtime_error("the untangler returned a frame of the wrong size");
      }
    }
    // Every finished frame converted (and checked finite) before the first byte of the caller's
    // output is written: a failure here leaves it as it was.
    std::vector<float> staged(3 * vertex_count * finished);
    for (std::size_t f = 0; f < finished; ++f) {
      const untangle::Positions frame = weld.to_input(result[f]);
      untangle::capi::write_xyz(frame.data(), vertex_count, staged.data() + 3 * vertex_count * f,
                                0);
    }
    if (!staged.empty()) std::memcpy(output, staged.data(), staged.size() * sizeof(float));
    for (std::size_t f = 0; f < finished; ++f) {
      if (reports != nullptr) {
        auto* slot = reinterpret_cast<UtUntangleReport*>(reinterpret_cast<unsigned char*>(reports) +
                                                         f * report_stride);
        slot->struct_size = static_cast<std::uint32_t>(report_stride);
        untangle::capi::report_to_c(outcome.frames[f], slot);
      }
    }
    if (frames_done != nullptr) *frames_done = finished;
    if (outcome.cancelled) {
      throw untangle::capi::Cancelled("cancelled by the progress callback after " +
                                      std::to_string(finished) + " of " +
                                      std::to_string(frame_count) + " frames");
    }
  });
}

}  // extern "C"

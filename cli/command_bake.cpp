// `untangle bake TOPOLOGY.obj IN.pc2 -o OUT.pc2`: the frame-by-frame untangler on a point cache
// (issue 4): every frame of an animation made intersection-free, written as a PC2 that Blender's
// Mesh Cache modifier plays on the same mesh.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "command.hpp"
#include "engine.hpp"
#include "json.hpp"
#include "stage_report.hpp"
#include "thickness_hint.hpp"
#include "untangle/io/pc2.hpp"

namespace untangle::cli {

int run_bake(CommandArgs args) {
  std::string topology_path;
  std::string in_path;
  std::string out_path;
  UtUntangleOptions options = default_untangle_options();
  bool independent = false;
  std::string method;
  double strength = 0;
  double thickness = 0;
  int threads = 0;
  bool json = false;
  bool keep_seams_apart = false;
  ArgParser parser(
      "untangle bake TOPOLOGY.obj IN.pc2 -o OUT.pc2 [options]",
      "Untangles every frame of a PC2 point cache. TOPOLOGY.obj gives the faces (its\n"
      "positions are not used; its vertex count and order must be the cache's, as when\n"
      "both are exported from the same Blender object). Each input frame is the shape\n"
      "that frame keeps; unless --independent, a frame starts from the previous frame's\n"
      "correction, so the output does not jump between frames.");
  parser.positional("TOPOLOGY.obj", "the mesh the cache animates (Wavefront OBJ)", &topology_path)
      .positional("IN.pc2", "the input cache", &in_path)
      .option("-o,--output", "OUT.pc2", "where to write the untangled cache (required)", &out_path)
      .flag("--independent", "untangle every frame on its own", &independent)
      .option("--method", "M", method_choices(), &method)
      .option("--strength", "S", "response strength (h0 = S * mean edge length; default 1)",
              &strength, 0, 1000)
      .option("--thickness", "T",
              "the gap kept between layers, in the mesh's units (default 0.01: a centimetre\n"
              "in metres, as Blender's; give 1 for a mesh in centimetres, 10 in millimetres)",
              &thickness, 0, 1000)
      .option(
          "--max-iterations", "N",
          "iterations per frame at most (default " + std::to_string(options.max_iterations) + ")",
          &options.max_iterations, 1, 1000000)
      .option("--strain-limit", "S",
              "largest edge strain against the input while untangling, 0 = none\n"
              "(default 0.045)",
              &options.strain_limit, 0, 1)
      .option("--threads", "N", "OpenMP threads (0 = default); results do not depend on it",
              &threads, 0, 1024)
      .flag("--keep-seams-apart",
            "do not sew seams (vertices at one position along border edges that run\n"
            "together are sewn by default, so panels stay sewn): for slits modelled on purpose",
            &keep_seams_apart)
      .flag("--json", "print one JSON object instead of text", &json)
      .epilog(
          "JSON keys: frames, pairs_in, pairs_out (one value per frame), iterations (all\n"
          "frames), max_edge_strain (over all frames, against each input frame),\n"
          "seconds_per_frame, seconds,\n"
          "stage_seconds (detection, analysis, response, solver, proximity, strain_limit;\n"
          "summed over frames).\n"
          "On Ctrl-C the frames finished so far are written (a valid, shorter cache).");
  if (!parser.parse(args)) {
    std::cout << parser.help();
    return kExitOk;
  }
  if (out_path.empty()) throw UsageError("missing -o OUT.pc2");
  options.independent = independent ? 1 : 0;

  UtSettings settings = default_settings();
  if (!method.empty()) settings.method = parse_method(method);
  if (parser.given("--strength")) settings.response_strength = strength;
  if (parser.given("--thickness")) settings.thickness = thickness;
  options.keep_seams_apart = keep_seams_apart ? 1 : 0;
  apply_threads(settings, threads);

  const MeshFile file = read_mesh_file(topology_path);
  const ObjMesh& obj = file.obj;
  const ObjPieces& pieces = file.pieces;
  const PointCache cache = read_pc2(in_path);
  if (cache.vertex_count != obj.positions.size()) {
    throw CliError(in_path + " has " + std::to_string(cache.vertex_count) + " vertices, " +
                   topology_path + " has " + std::to_string(obj.positions.size()));
  }
  if (cache.frames.empty()) throw CliError(in_path + " holds no frame");
  SceneHandle scene;
  add_pieces(scene, pieces, topology_path);

  // The cache is in the file's vertex order; the engine wants the pieces' order.
  const std::size_t n = pieces.vertex_count();
  const std::size_t frame_count = cache.frames.size();
  std::vector<float> input(3 * n * frame_count);
  for (std::size_t f = 0; f < frame_count; ++f) {
    for (std::size_t i = 0; i < n; ++i) {
      const Vec3& p = cache.frames[f][pieces.source_vertex[i]];
      for (int k = 0; k < 3; ++k)
        input[3 * (f * n + i) + static_cast<std::size_t>(k)] = static_cast<float>(p[k]);
    }
  }

  if (!parser.given("--thickness")) {
    Positions first_frame(n);
    for (std::size_t i = 0; i < n; ++i) first_frame[i] = cache.frames[0][pieces.source_vertex[i]];
    const std::string hint = thickness_hint(pieces, first_frame, settings.thickness);
    if (!hint.empty()) std::fprintf(stderr, "untangle bake: %s\n", hint.c_str());
  }

  install_interrupt_handler();
  ProgressReporter progress{"frame", {}};
  std::vector<float> output(input.size());
  std::vector<UtUntangleReport> reports(frame_count);
  for (UtUntangleReport& r : reports) r.struct_size = sizeof r;
  std::size_t frames_done = 0;
  const auto start = std::chrono::steady_clock::now();
  const UtStatus status = ut_untangle_sequence(
      scene.get(), &settings, &options, input.data(), frame_count, n, output.data(), reports.data(),
      &frames_done, &ProgressReporter::callback, &progress);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  progress.line.clear();
  const bool cancelled = status == UT_ERROR_CANCELLED;
  if (!cancelled) {
    check(status, in_path);
    frames_done = frame_count;
  }

  // Vertices no face uses keep the input's positions.
  Pc2Writer writer(out_path, cache.vertex_count, cache.start_frame, cache.sampling);
  for (std::size_t f = 0; f < frames_done; ++f) {
    Positions frame = cache.frames[f];
    for (std::size_t i = 0; i < n; ++i) {
      const float* p = &output[3 * (f * n + i)];
      frame[pieces.source_vertex[i]] = Vec3(p[0], p[1], p[2]);
    }
    writer.append(frame);
  }
  writer.finish();

  std::vector<std::uint64_t> pairs_in;
  std::vector<std::uint64_t> pairs_out;
  std::uint64_t iterations = 0;
  double max_strain = 0;
  UtUntangleReport stages{};  // the stage times summed over the frames
  for (std::size_t f = 0; f < frames_done; ++f) {
    const UtUntangleReport& r = reports[f];
    pairs_in.push_back(r.pairs_before);
    pairs_out.push_back(r.pairs_after);
    iterations += static_cast<std::uint64_t>(std::max(r.iterations, 0));
    max_strain = std::max(max_strain, r.max_edge_strain);
    stages.seconds_detection += r.seconds_detection;
    stages.seconds_analysis += r.seconds_analysis;
    stages.seconds_response += r.seconds_response;
    stages.seconds_solver += r.seconds_solver;
    stages.seconds_proximity += r.seconds_proximity;
    stages.seconds_strain_limit += r.seconds_strain_limit;
  }
  const double seconds_per_frame =
      frames_done == 0 ? 0 : seconds / static_cast<double>(frames_done);

  if (json) {
    JsonWriter out(std::cout);
    out.begin_object()
        .field("frames", static_cast<std::uint64_t>(frames_done))
        .array<std::uint64_t>("pairs_in", pairs_in)
        .array<std::uint64_t>("pairs_out", pairs_out)
        .field("iterations", iterations)
        .field("max_edge_strain", max_strain)
        .field("seconds_per_frame", seconds_per_frame)
        .field("seconds", seconds);
    write_stage_seconds(out, stages);
    out.end_object();
  } else {
    // On a terminal only the frames that are still tangled; in a log every frame.
    const bool every = !stdout_is_terminal();
    std::size_t tangled = 0;
    for (std::size_t f = 0; f < frames_done; ++f) {
      if (pairs_out[f] > 0) ++tangled;
      if (every || pairs_out[f] > 0) {
        std::printf("frame %5zu  pairs %5llu -> %llu  %4d iterations  strain %.2f %%  %.2f s\n", f,
                    static_cast<unsigned long long>(pairs_in[f]),
                    static_cast<unsigned long long>(pairs_out[f]), reports[f].iterations,
                    100 * reports[f].max_edge_strain, reports[f].seconds);
      }
    }
    const auto max_of = [](const std::vector<std::uint64_t>& v) {
      return static_cast<unsigned long long>(v.empty() ? 0 : *std::max_element(v.begin(), v.end()));
    };
    std::printf(
        "%zu frames: intersecting pairs per frame at most %llu in, %llu out; %zu frame%s "
        "still tangled\n",
        frames_done, max_of(pairs_in), max_of(pairs_out), tangled, tangled == 1 ? "" : "s");
    std::printf(
        "max edge strain against the input %.2f %%, %llu iterations, %.3f s per frame, "
        "%.2f s\n",
        100 * max_strain, static_cast<unsigned long long>(iterations), seconds_per_frame, seconds);
    print_stage_milliseconds(stages, static_cast<long long>(iterations), "");
    std::printf("wrote %s\n", out_path.c_str());
  }
  if (cancelled) {
    std::fprintf(stderr, "untangle bake: interrupted; %s holds the %zu frames finished\n",
                 out_path.c_str(), frames_done);
    return kExitInterrupted;
  }
  return kExitOk;
}

}  // namespace untangle::cli

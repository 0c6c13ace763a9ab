// `untangle fix IN.obj -o OUT.obj`: the static untangler on a mesh file (issue 4): one tangled
// state in, an intersection-free state out, with the edge strain measured against the input.
#include <chrono>
#include <cstdio>
#include <iostream>

#include "command.hpp"
#include "engine.hpp"
#include "json.hpp"
#include "stage_report.hpp"
#include "thickness_hint.hpp"

namespace untangle::cli {

int run_fix(CommandArgs args) {
  std::string in_path;
  std::string out_path;
  UtUntangleOptions options = default_untangle_options();
  std::string method;
  double strength = 0;
  double thickness = 0;
  int threads = 0;
  bool json = false;
  bool keep_seams_apart = false;
  ArgParser parser(
      "untangle fix IN.obj -o OUT.obj [options]",
      "Moves the vertices of a self-intersecting mesh until no intersection is left (or\n"
      "the iteration limit is reached), keeping its shape: the edge lengths and bending\n"
      "of the input are kept and every vertex is pulled softly back toward its input\n"
      "position. OUT.obj keeps the input's vertex order and colours, faces, texture\n"
      "coordinates, groups and materials; its normals are dropped, because they no\n"
      "longer match the moved surface.");
  parser.positional("IN.obj", "the tangled mesh (Wavefront OBJ)", &in_path)
      .option("-o,--output", "OUT.obj", "where to write the untangled mesh (required)", &out_path)
      .option(
          "--max-iterations", "N",
          "pipeline iterations at most (default " + std::to_string(options.max_iterations) + ")",
          &options.max_iterations, 1, 1000000)
      .option("--strain-limit", "S",
              "largest edge strain against the input while untangling, 0 = none\n"
              "(default 0.045)",
              &options.strain_limit, 0, 1)
      .option("--method", "M", method_choices(), &method)
      .option("--strength", "S", "response strength (h0 = S * mean edge length; default 1)",
              &strength, 0, 1000)
      .option("--thickness", "T",
              "the gap kept between layers, in the mesh's units (default 0.01: a centimetre\n"
              "in metres, as Blender's; give 1 for a mesh in centimetres, 10 in millimetres)",
              &thickness, 0, 1000)
      .option("--threads", "N", "OpenMP threads (0 = default); results do not depend on it",
              &threads, 0, 1024)
      .flag("--keep-seams-apart",
            "do not sew seams (vertices at one position along border edges that run\n"
            "together are sewn by default, so panels stay sewn): for slits modelled on purpose",
            &keep_seams_apart)
      .flag("--json", "print one JSON object instead of text", &json)
      .epilog(
          "JSON keys: pairs_before, pairs_after, iterations, iterations_to_clean (until the\n"
          "first clean state; the rest relax the stretch; -1 = never clean), max_edge_strain\n"
          "(max |length_out / length_in - 1| over the input's polygon edges, not the\n"
          "diagonals that split them), seconds, and stage_seconds:\n"
          "detection, analysis, response, solver, proximity and strain_limit (parts of\n"
          "solver), summed over the iterations.\n"
          "The exit status is 0 when OUT.obj was written, also when pairs are left.");
  if (!parser.parse(args)) {
    std::cout << parser.help();
    return kExitOk;
  }
  if (out_path.empty()) throw UsageError("missing -o OUT.obj");

  UtSettings settings = default_settings();
  if (!method.empty()) settings.method = parse_method(method);
  if (parser.given("--strength")) settings.response_strength = strength;
  if (parser.given("--thickness")) settings.thickness = thickness;
  options.keep_seams_apart = keep_seams_apart ? 1 : 0;
  apply_threads(settings, threads);

  MeshFile file = read_mesh_file(in_path);
  ObjMesh& obj = file.obj;
  const ObjPieces& pieces = file.pieces;
  SceneHandle scene;
  add_pieces(scene, pieces, in_path);
  if (!parser.given("--thickness")) {
    Positions at_input;
    for (const PolygonMesh& piece : pieces.meshes) {
      at_input.insert(at_input.end(), piece.positions.begin(), piece.positions.end());
    }
    const std::string hint = thickness_hint(pieces, at_input, settings.thickness);
    if (!hint.empty()) std::fprintf(stderr, "untangle fix: %s\n", hint.c_str());
  }

  install_interrupt_handler();
  ProgressReporter progress{"iteration", {}};
  std::vector<float> output(3 * pieces.vertex_count());
  UtUntangleReport report{};
  report.struct_size = sizeof report;
  const auto start = std::chrono::steady_clock::now();
  const UtStatus status =
      ut_untangle(scene.get(), &settings, &options, nullptr, output.data(), pieces.vertex_count(),
                  &report, &ProgressReporter::callback, &progress);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  progress.line.clear();
  if (status == UT_ERROR_CANCELLED) {
    std::fprintf(stderr,
                 "untangle fix: interrupted after %d iterations (%llu pairs left); %s not "
                 "written\n",
                 report.iterations, static_cast<unsigned long long>(report.pairs_after),
                 out_path.c_str());
    return kExitInterrupted;
  }
  check(status, in_path);

  // The engine works on floats; a vertex it did not move keeps the file's own digits.
  Positions fixed = from_floats(output);
  for (std::size_t i = 0; i < fixed.size(); ++i) {
    const Vec3& original = obj.positions[pieces.source_vertex[i]];
    if (original.cast<float>().cast<double>() == fixed[i]) fixed[i] = original;
  }
  scatter_positions(pieces, fixed, obj);
  write_obj(out_path, obj, /*with_normals=*/false);

  if (json) {
    JsonWriter out(std::cout);
    out.begin_object()
        .field("pairs_before", report.pairs_before)
        .field("pairs_after", report.pairs_after)
        .field("iterations", report.iterations)
        .field("iterations_to_clean", report.iterations_to_clean)
        .field("max_edge_strain", report.max_edge_strain)
        .field("seconds", seconds);
    write_stage_seconds(out, report);
    out.end_object();
    return kExitOk;
  }
  std::printf("%s: %llu intersecting pairs -> %llu in %d iteration%s (%s), %.3f s\n",
              in_path.c_str(), static_cast<unsigned long long>(report.pairs_before),
              static_cast<unsigned long long>(report.pairs_after), report.iterations,
              report.iterations == 1 ? "" : "s", std::string(method_name(settings.method)).c_str(),
              seconds);
  std::printf("  max edge strain against the input %.2f %%, max displacement %.4g, mean %.4g\n",
              100 * report.max_edge_strain, report.max_displacement, report.mean_displacement);
  if (report.iterations_to_clean > 0) {
    std::printf("  clean after %d of the iterations, the rest relaxed the stretch\n",
                report.iterations_to_clean);
  }
  print_stage_milliseconds(report, report.iterations, "  ");
  if (report.pairs_after > 0) {
    std::printf(
        "  not fully untangled: %llu loop, %llu boundary, %llu crease contours left "
        "(try --max-iterations or another --method)\n",
        static_cast<unsigned long long>(report.contours_loop),
        static_cast<unsigned long long>(report.contours_boundary),
        static_cast<unsigned long long>(report.contours_crease));
  }
  std::printf("wrote %s\n", out_path.c_str());
  return kExitOk;
}

}  // namespace untangle::cli

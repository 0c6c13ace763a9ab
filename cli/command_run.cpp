// `untangle run SCENE`: one of the built-in scenes stepped headless (issue 3), with the
// intersection count of every frame; the README's main job (`cmake --workflow --preset demo`).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "command.hpp"
#include "engine.hpp"
#include "json.hpp"
#include "untangle/io/pc2.hpp"

namespace untangle::cli {
namespace {

struct FrameRow {
  UtFrameStats stats;
  double ms = 0;  // wall time of the step
};

std::uint64_t contour_total(const UtFrameStats& s) {
  return s.contours_loop + s.contours_boundary + s.contours_crease;
}

std::string frame_line(const FrameRow& row) {
  const UtFrameStats& s = row.stats;
  char text[160];
  std::snprintf(text, sizeof text,
                "frame %5llu  pairs %5llu  contours %3llu (loop %llu, boundary %llu, crease "
                "%llu)  %7.2f ms",
                static_cast<unsigned long long>(s.frame), static_cast<unsigned long long>(s.pairs),
                static_cast<unsigned long long>(contour_total(s)),
                static_cast<unsigned long long>(s.contours_loop),
                static_cast<unsigned long long>(s.contours_boundary),
                static_cast<unsigned long long>(s.contours_crease), row.ms);
  return text;
}

void write_csv_header(std::ostream& out) {
  out << "frame,pairs,hits,dropped_hits,contours_loop,contours_boundary,contours_crease,"
         "culled_nodes,proximity_pairs,stuck_contours,max_edge_strain,kinetic_energy,ms\n";
}

void write_csv_row(std::ostream& out, const FrameRow& row) {
  const UtFrameStats& s = row.stats;
  out << s.frame << ',' << s.pairs << ',' << s.hits << ',' << s.dropped_hits << ','
      << s.contours_loop << ',' << s.contours_boundary << ',' << s.contours_crease << ','
      << s.culled_nodes << ',' << s.proximity_pairs << ',' << s.stuck_contours << ','
      << JsonWriter::number(s.max_edge_strain) << ',' << JsonWriter::number(s.kinetic_energy) << ','
      << JsonWriter::number(row.ms) << '\n';
}

// The scene's mesh as frame 0, one OBJ object whose vertex order is the PC2's.
std::filesystem::path write_scene_obj(const std::filesystem::path& dir, const std::string& scene,
                                      const WorldHandle& world) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) throw CliError("cannot create '" + dir.string() + "': " + error.message());
  const std::vector<PolygonMesh> pieces = world.pieces();
  std::vector<std::string> names;
  for (std::size_t p = 0; p < pieces.size(); ++p) {
    names.push_back(pieces.size() == 1 ? "cloth" : "sheet_" + std::to_string(p));
  }
  const std::filesystem::path path = dir / (scene + ".obj");
  write_obj(path, obj_from_pieces(pieces, names, scene));
  return path;
}

}  // namespace

int run_run(CommandArgs args) {
  std::string scene;
  int frames = 200;
  bool no_untangle = false;
  std::string method;
  double strength = 0;
  int threads = 0;
  int seed = 0;
  bool json = false;
  bool every_frame = false;
  std::string csv_path;
  std::string obj_dir;
  std::string pc2_path;
  ArgParser parser(
      "untangle run SCENE [options]",
      "Runs a built-in scene headless and prints, per frame, the intersecting triangle\n"
      "pairs (found before the untangling response of that frame), the contours by type\n"
      "and the time of the step. Untangles with ICM unless told otherwise.");
  parser.positional("SCENE", joined(scene_names()), &scene)
      .option("--frames", "N", "frames to run (default 200)", &frames, 1, 1000000)
      .flag("--no-untangle", "switch the untangling response off (the baseline)", &no_untangle)
      .option("--method", "M", method_choices(), &method)
      .option("--strength", "S", "response strength (h0 = S * particle spacing; default 1)",
              &strength, 0, 1000)
      .option("--threads", "N", "OpenMP threads (0 = default); results do not depend on it",
              &threads, 0, 1024)
      .option("--seed", "N",
              "jitter the start by up to 1e-6 of the particle spacing, from seed N\n"
              "(0 = none, the default): a result should not hang on float rounding",
              &seed, 0, 1000000000)
      .flag("--json", "print a JSON summary instead of the per-frame lines", &json)
      .flag("-v,--every-frame", "on a terminal too, one line per frame (not only on changes)",
            &every_frame)
      .option("--csv", "FILE", "write one CSV row per frame", &csv_path)
      .option("--obj-dir", "DIR", "write the scene's mesh at frame 0 as DIR/SCENE.obj", &obj_dir)
      .option("--pc2", "FILE",
              "write the positions as a PC2 cache: the initial state, then every frame\n"
              "(frames+1 samples; play it with a Mesh Cache modifier on SCENE.obj)",
              &pc2_path)
      .epilog(
          "Output: one line per frame when stdout is not a terminal; on a terminal a\n"
          "progress line, and a line for each frame where the counts change.\n"
          "JSON keys: frames, pairs_per_frame, final_pairs, mean_pairs_last_half,\n"
          "max_edge_strain (largest |length/rest - 1| at the end), seconds_per_frame.\n\n"
          "Playback in Blender: import DIR/SCENE.obj (Forward Y, Up Z keeps the engine's\n"
          "z-up coordinates; it is one object), add a Mesh Cache modifier with the PC2 file\n"
          "and frame start 1: scene frame 1 is the initial state.\n\n"
          "example: untangle run tangled-start --frames 200");
  if (!parser.parse(args)) {
    std::cout << parser.help();
    return kExitOk;
  }

  UtSettings settings = scene_settings(scene);
  if (no_untangle) settings.untangle = 0;
  if (!method.empty()) settings.method = parse_method(method);
  if (parser.given("--strength")) settings.response_strength = strength;
  apply_threads(settings, threads);
  WorldHandle world(scene, &settings, static_cast<std::uint64_t>(seed));

  std::optional<std::ofstream> csv;
  if (!csv_path.empty()) {
    csv.emplace(csv_path, std::ios::trunc);
    if (!*csv) throw CliError("cannot open '" + csv_path + "' for writing");
    write_csv_header(*csv);
  }
  if (!obj_dir.empty()) {
    const auto path = write_scene_obj(obj_dir, scene, world);
    if (!json) std::printf("wrote %s\n", path.string().c_str());
  }
  std::unique_ptr<Pc2Writer> pc2;
  const std::size_t vertex_count = world.vertex_count();
  if (!pc2_path.empty()) {
    pc2 = std::make_unique<Pc2Writer>(pc2_path, vertex_count);
    pc2->append(from_floats(world.positions()));
  }

  const bool terminal = stdout_is_terminal();
  const bool frame_lines = !json && (!terminal || every_frame);
  const bool change_lines = !json && terminal && !every_frame;
  if (!json) {
    std::printf("%s: %zu particles in %zu piece%s, untangling %s", scene.c_str(), vertex_count,
                world.piece_count(), world.piece_count() == 1 ? "" : "s",
                settings.untangle ? "on" : "off");
    if (settings.untangle) {
      std::printf(" (%s, strength %g)", std::string(method_name(settings.method)).c_str(),
                  settings.response_strength);
    }
    std::printf(", %d frames\n", frames);
    std::fflush(stdout);
  }

  install_interrupt_handler();
  StatusLine status;
  std::vector<FrameRow> rows;
  rows.reserve(static_cast<std::size_t>(frames));
  double total_ms = 0;
  status.show("frame 0/" + std::to_string(frames) + " " + progress_bar(0, 1), true);
  for (int f = 0; f < frames && !interrupted(); ++f) {
    const auto start = std::chrono::steady_clock::now();
    world.step(1);
    const auto end = std::chrono::steady_clock::now();
    FrameRow row{world.stats(), std::chrono::duration<double, std::milli>(end - start).count()};
    total_ms += row.ms;
    if (csv) write_csv_row(*csv, row);
    if (pc2) pc2->append(from_floats(world.positions()));
    const bool changed = rows.empty() || row.stats.pairs != rows.back().stats.pairs ||
                         contour_total(row.stats) != contour_total(rows.back().stats);
    rows.push_back(row);
    if (frame_lines || (change_lines && (changed || f + 1 == frames))) {
      status.clear();
      std::printf("%s\n", frame_line(row).c_str());
      std::fflush(stdout);
    }
    status.show("frame " + std::to_string(f + 1) + "/" + std::to_string(frames) + " " +
                progress_bar(static_cast<std::size_t>(f + 1), static_cast<std::size_t>(frames)) +
                " " + std::to_string(row.stats.pairs) + " pairs, " +
                std::to_string(static_cast<int>(total_ms / static_cast<double>(f + 1) + 0.5)) +
                " ms/frame");
  }
  status.clear();
  if (pc2) pc2->finish();
  if (csv) {
    csv->close();
    if (!*csv) throw CliError("cannot write '" + csv_path + "'");
  }

  const std::size_t done = rows.size();
  std::vector<std::uint64_t> pairs;
  for (const FrameRow& row : rows) pairs.push_back(row.stats.pairs);
  double last_half_sum = 0;
  for (std::size_t f = done / 2; f < done; ++f) last_half_sum += static_cast<double>(pairs[f]);
  const double mean_last_half =
      done == 0 ? 0 : last_half_sum / static_cast<double>(done - done / 2);
  const std::uint64_t final_pairs = done == 0 ? 0 : pairs.back();
  const double max_strain = done == 0 ? 0 : rows.back().stats.max_edge_strain;
  const double seconds_per_frame = done == 0 ? 0 : total_ms / 1000 / static_cast<double>(done);

  if (json) {
    JsonWriter out(std::cout);
    out.begin_object()
        .field("frames", static_cast<std::uint64_t>(done))
        .array<std::uint64_t>("pairs_per_frame", pairs)
        .field("final_pairs", final_pairs)
        .field("mean_pairs_last_half", mean_last_half)
        .field("max_edge_strain", max_strain)
        .field("seconds_per_frame", seconds_per_frame)
        .end_object();
  } else {
    std::optional<std::size_t> first_zero;
    for (std::size_t f = 0; f < done && !first_zero; ++f) {
      if (pairs[f] == 0) first_zero = f + 1;
    }
    std::printf(
        "%zu frames, %.2f ms per frame; intersecting pairs: first frame %llu, final %llu, "
        "mean over the second half %.2f\n",
        done, 1000 * seconds_per_frame,
        static_cast<unsigned long long>(done == 0 ? 0 : pairs.front()),
        static_cast<unsigned long long>(final_pairs), mean_last_half);
    if (first_zero) {
      std::printf("first frame without intersections: %zu\n", *first_zero);
    } else {
      std::printf("no frame without intersections\n");
    }
    std::printf("max edge strain at the end: %.2f %%\n", 100 * max_strain);
    if (!pc2_path.empty()) std::printf("wrote %s (%zu samples)\n", pc2_path.c_str(), done + 1);
    if (!csv_path.empty()) std::printf("wrote %s\n", csv_path.c_str());
  }
  if (interrupted()) {
    std::fprintf(stderr, "untangle run: interrupted after %zu frames\n", done);
    return kExitInterrupted;
  }
  return kExitOk;
}

}  // namespace untangle::cli

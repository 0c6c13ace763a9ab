// `untangle compare`: every built-in scene with every untangling method and with untangling
// off, and `fix` of tangled meshes with every method, side by side in one table (issue 5). It
// makes the same C ABI calls as `untangle run` and `untangle fix`, so the figures are theirs.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>

#include "command.hpp"
#include "engine.hpp"
#include "json.hpp"

namespace untangle::cli {
namespace {

// "off" (untangling switched off: the baseline), then every method.
std::vector<std::string> modes() {
  std::vector<std::string> all{"off"};
  const std::vector<std::string>& methods = method_names();
  all.insert(all.end(), methods.begin(), methods.end());
  return all;
}

struct Row {
  std::string subject;  // scene name or mesh path
  std::string mode;
  std::size_t steps = 0;                  // frames (scenes) or iterations (fix) run
  std::optional<std::size_t> first_zero;  // first frame/iteration with 0 pairs, 1-based
  double mean_pairs = 0;                  // over the second half of the steps
  std::uint64_t max_pairs = 0;            // over the second half
  std::uint64_t final_pairs = 0;
  double max_edge_strain = 0;
  double ms_per_step = 0;
};

// Statistics of a per-step pair count, the second half as in `untangle run`: [n/2, n).
void summarize(const std::vector<std::uint64_t>& pairs, Row& row) {
  row.steps = pairs.size();
  for (std::size_t i = 0; i < pairs.size() && !row.first_zero; ++i) {
    if (pairs[i] == 0) row.first_zero = i + 1;
  }
  if (pairs.empty()) return;
  double sum = 0;
  for (std::size_t i = pairs.size() / 2; i < pairs.size(); ++i) {
    sum += static_cast<double>(pairs[i]);
    row.max_pairs = std::max(row.max_pairs, pairs[i]);
  }
  row.mean_pairs = sum / static_cast<double>(pairs.size() - pairs.size() / 2);
  row.final_pairs = pairs.back();
}

UtSettings mode_settings(UtSettings settings, std::string_view mode, int threads) {
  if (mode == "off") {
    settings.untangle = 0;
  } else {
    settings.untangle = 1;
    settings.method = parse_method(mode);
  }
  apply_threads(settings, threads);
  return settings;
}

Row run_scene(const std::string& scene, std::string_view mode, int frames, int threads,
              StatusLine& status) {
  UtSettings settings = mode_settings(scene_settings(scene), mode, threads);
  WorldHandle world(scene, &settings);
  Row row;
  row.subject = scene;
  row.mode = mode;
  std::vector<std::uint64_t> pairs;
  double total_ms = 0;
  for (int f = 0; f < frames && !interrupted(); ++f) {
    const auto start = std::chrono::steady_clock::now();
    world.step(1);
    total_ms +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    const UtFrameStats stats = world.stats();
    pairs.push_back(stats.pairs);
    row.max_edge_strain = std::max(row.max_edge_strain, stats.max_edge_strain);
    status.show(scene + " " + std::string(mode) + " " +
                progress_bar(static_cast<std::size_t>(f + 1), static_cast<std::size_t>(frames)) +
                " " + std::to_string(stats.pairs) + " pairs");
  }
  summarize(pairs, row);
  row.ms_per_step = pairs.empty() ? 0 : total_ms / static_cast<double>(pairs.size());
  return row;
}

struct FixProgress {
  std::vector<std::uint64_t> pairs;
  StatusLine* status;
  std::string label;
  static int32_t callback(void* self, int32_t done, int32_t total, uint64_t pairs) {
    auto& progress = *static_cast<FixProgress*>(self);
    progress.pairs.push_back(pairs);
    progress.status->show(progress.label + " " +
                          progress_bar(static_cast<std::size_t>(std::max(done, 0)),
                                       static_cast<std::size_t>(std::max(total, 0))) +
                          " " + std::to_string(pairs) + " pairs");
    return interrupted() ? 0 : 1;
  }
};

// `fix` of one mesh: the untangler's iterations play the part of frames. With untangling off
// there is nothing to iterate: the row holds the input's own pairs (one detection).
Row run_fix(const std::string& path, const SceneHandle& scene, std::size_t vertex_count,
            std::string_view mode, const UtUntangleOptions& options, int threads,
            StatusLine& status) {
  const UtSettings settings = mode_settings(default_settings(), mode, threads);
  Row row;
  row.subject = path;
  row.mode = mode;
  if (mode == "off") {
    UtFrameStats stats = empty_stats();
    check(ut_detect(scene.get(), &settings, &stats, nullptr, 0), path);
    summarize({stats.pairs}, row);
    row.steps = 0;
    row.ms_per_step = stats.ms_total;
    return row;
  }
  FixProgress progress{{}, &status, path + " " + std::string(mode)};
  std::vector<float> output(3 * vertex_count);
  UtUntangleReport report{};
  report.struct_size = sizeof report;
  const UtStatus result = ut_untangle(scene.get(), &settings, &options, nullptr, output.data(),
                                      vertex_count, &report, &FixProgress::callback, &progress);
  if (result == UT_ERROR_CANCELLED) throw CliError("interrupted");
  check(result, path);
  summarize(progress.pairs, row);
  row.final_pairs = report.pairs_after;
  row.max_edge_strain = report.max_edge_strain;
  row.ms_per_step =
      report.iterations > 0 ? report.seconds * 1000 / static_cast<double>(report.iterations) : 0;
  return row;
}

void print_table(const char* title, const char* step, const std::vector<Row>& rows) {
  if (rows.empty()) return;
  std::size_t width = 7;
  for (const Row& row : rows) width = std::max(width, row.subject.size());
  std::printf("%s\n", title);
  std::printf("%-*s  %-7s  %7s  %9s  %9s  %7s  %7s  %10s  %9s\n", static_cast<int>(width), "",
              "method", step, "first 0", "mean 2nd", "max 2nd", "final", "max strain", "ms/step");
  for (const Row& row : rows) {
    char first[24];
    if (row.first_zero) {
      std::snprintf(first, sizeof first, "%zu", *row.first_zero);
    } else {
      std::snprintf(first, sizeof first, "never");
    }
    std::printf("%-*s  %-7s  %7zu  %9s  %9.2f  %7llu  %7llu  %9.2f%%  %9.2f\n",
                static_cast<int>(width), row.subject.c_str(), row.mode.c_str(), row.steps, first,
                row.mean_pairs, static_cast<unsigned long long>(row.max_pairs),
                static_cast<unsigned long long>(row.final_pairs), 100 * row.max_edge_strain,
                row.ms_per_step);
  }
  std::printf("\n");
}

void write_rows(JsonWriter& json, std::string_view name, std::string_view subject,
                std::string_view steps, const std::vector<Row>& rows) {
  json.key(name).begin_array();
  for (const Row& row : rows) {
    json.begin_object()
        .field(subject, row.subject)
        .field("method", row.mode)
        .field(steps, static_cast<std::uint64_t>(row.steps));
    json.key("first_zero");
    if (row.first_zero) {
      json.value(static_cast<std::uint64_t>(*row.first_zero));
    } else {
      json.null();
    }
    json.field("mean_pairs_second_half", row.mean_pairs)
        .field("max_pairs_second_half", row.max_pairs)
        .field("final_pairs", row.final_pairs)
        .field("max_edge_strain", row.max_edge_strain)
        .field("ms_per_step", row.ms_per_step)
        .end_object();
  }
  json.end_array();
}

}  // namespace

int run_compare(CommandArgs args) {
  int frames = 400;
  int threads = 0;
  bool json = false;
  bool no_scenes = false;
  std::vector<std::string> meshes;
  UtUntangleOptions options = default_untangle_options();
  ArgParser parser(
      "untangle compare [MESH.obj...] [options]",
      "Runs every built-in scene with every untangling method (" + joined(method_names(), ", ") +
          ")\n"
          "and with untangling off, then `fix` of each MESH.obj with every method, and prints\n"
          "one table: the first frame (or fix iteration) with 0 intersecting pairs, the mean\n"
          "and max pairs per frame over the second half, the pairs of the last frame, the max\n"
          "edge strain and the milliseconds per frame. Each run uses the scene's own settings\n"
          "and the same C ABI calls as `untangle run` and `untangle fix`.");
  parser.option("--frames", "N", "frames per scene run (default 400)", &frames, 1, 1000000)
      .option("--max-iterations", "N",
              "fix iterations at most (default " + std::to_string(options.max_iterations) + ")",
              &options.max_iterations, 1, 1000000)
      .option("--threads", "N", "OpenMP threads (0 = default); results do not depend on it",
              &threads, 0, 1024)
      .flag("--no-scenes", "only the meshes given on the command line", &no_scenes)
      .flag("--json", "print one JSON object instead of the tables", &json)
      .epilog(
          "Scene rows: max strain is the largest |length/rest - 1| over all frames; pairs\n"
          "are counted before each frame's response, as in `untangle run`.\n"
          "Fix rows: the untangler's iterations are the steps; max strain is against the\n"
          "input (max |length_out/length_in - 1|); 'off' is the input's own pair count.\n"
          "JSON keys: frames, scenes (array of scene, method, frames, first_zero,\n"
          "mean_pairs_second_half, max_pairs_second_half, final_pairs, max_edge_strain,\n"
          "ms_per_step), fix (the same with mesh and iterations).\n\n"
          "example: untangle compare --frames 400 tangled.obj");
  // The parser takes a fixed number of positionals: mesh paths are the arguments that are not
  // options or option values.
  std::vector<std::string> rest;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool takes_value = a == "--frames" || a == "--max-iterations" || a == "--threads";
    if (!a.empty() && a[0] == '-') {
      rest.push_back(a);
      if (takes_value && i + 1 < args.size()) rest.push_back(args[++i]);
    } else {
      meshes.push_back(a);
    }
  }
  if (!parser.parse(rest)) {
    std::cout << parser.help();
    return kExitOk;
  }

  // Read every mesh before the long runs, so a bad path fails at once.
  struct Mesh {
    std::string path;
    ObjPieces pieces;
  };
  std::vector<Mesh> inputs;
  for (const std::string& path : meshes) inputs.push_back({path, split_pieces(read_obj(path))});

  install_interrupt_handler();
  StatusLine status;
  std::vector<Row> scene_rows, fix_rows;
  if (!no_scenes) {
    for (const std::string& scene : scene_names()) {
      for (const std::string& mode : modes()) {
        if (interrupted()) break;
        scene_rows.push_back(run_scene(std::string(scene), mode, frames, threads, status));
      }
    }
  }
  for (const Mesh& mesh : inputs) {
    SceneHandle scene;
    add_pieces(scene, mesh.pieces);
    for (const std::string& mode : modes()) {
      if (interrupted()) break;
      fix_rows.push_back(
          run_fix(mesh.path, scene, mesh.pieces.vertex_count(), mode, options, threads, status));
    }
  }
  status.clear();
  if (interrupted()) {
    std::fprintf(stderr, "untangle compare: interrupted\n");
    return kExitInterrupted;
  }

  if (json) {
    JsonWriter out(std::cout);
    out.begin_object().field("frames", frames);
    write_rows(out, "scenes", "scene", "frames", scene_rows);
    write_rows(out, "fix", "mesh", "iterations", fix_rows);
    out.end_object();
    std::cout << '\n';
  } else {
    char title[64];
    std::snprintf(title, sizeof title, "scenes, %d frames each", frames);
    print_table(title, "frames", scene_rows);
    print_table("fix", "iters", fix_rows);
  }
  return kExitOk;
}

}  // namespace untangle::cli

// Which of the untangler's rules earn their place (issue 19): `untangle fix` on each OBJ given,
// once with every rule and once with each rule switched off, one row per run. Pairs are the
// library's own count (both splits of every quad); bench/run_hard_tangles.py counts the CLI's
// output with Blender's BVHTree instead.
//
//   build/release/bench/ablate_untangler [--threads N] [--max-iterations N] [--only VARIANTS]
//       CASE.obj ...
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "untangle/io/obj.hpp"
#include "untangle/untangler.hpp"

namespace untangle {
namespace {

struct Variant {
  const char* name;
  std::function<void(UntangleOptions&)> change;
};

const std::vector<Variant>& variants() {
  static const std::vector<Variant> all = {
      {"all", [](UntangleOptions&) {}},
      {"-region_push", [](UntangleOptions& o) { o.region_push = false; }},
      {"-flip_sides", [](UntangleOptions& o) { o.flip_sides = false; }},
      {"-gia", [](UntangleOptions& o) { o.region_push = o.flip_sides = false; }},
      {"-crease_closure", [](UntangleOptions& o) { o.close_at_creases = false; }},
      {"-flatten", [](UntangleOptions& o) { o.flatten_crossed_quads = false; }},
      {"-ring_pairs", [](UntangleOptions& o) { o.ring_pairs = false; }},
      {"-soft_diagonals", [](UntangleOptions& o) { o.soft_diagonals = false; }},
      {"-general_position", [](UntangleOptions& o) { o.general_position = false; }},
      {"-ye_fallback", [](UntangleOptions& o) { o.fall_back_to_ye = false; }},
      {"-ease_pull", [](UntangleOptions& o) { o.ease_pull_on_stall = false; }},
      {"-ease_bending", [](UntangleOptions& o) { o.ease_bending_on_stall = false; }},
      {"+finish_each_frame", [](UntangleOptions& o) { o.finish_each_frame = true; }},
      // Not a rule off but the other push schedule: the sequence's gentle push, doubling on a
      // stall, from the first frame.
      {"+gentle_start", [](UntangleOptions& o) { o.strength_scale = o.sequence_strength_scale; }},
      {"-doubling",
       [](UntangleOptions& o) {
         o.strength_scale = o.sequence_strength_scale;
         o.max_strength_scale = o.sequence_strength_scale;
       }},
  };
  return all;
}

bool wanted(const std::string& only, const char* name) {
  if (only.empty()) return true;
  return ("," + only + ",").find(std::string(",") + name + ",") != std::string::npos;
}

int run(int argc, char** argv) {
  int threads = 2, max_iterations = 300;
  std::string only;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--threads" && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (arg == "--max-iterations" && i + 1 < argc) {
      max_iterations = std::atoi(argv[++i]);
    } else if (arg == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else {
      files.push_back(arg);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr,
                 "usage: ablate_untangler [--threads N] [--max-iterations N] [--only a,b] "
                 "CASE.obj ...\nvariants:");
    for (const Variant& v : variants()) std::fprintf(stderr, " %s", v.name);
    std::fprintf(stderr, "\n");
    return 2;
  }
  // iters: all frames; clean: frames until the first clean state (the rest relax the stretch).
  // Then milliseconds per iteration by stage (issue 20): detection (both splits), analysis,
  // response, solver, and the solver's parts in proximity searches and final strain-limit sweeps.
  std::printf("%-22s %-16s %8s %8s %6s %6s %8s %8s %7s %7s %7s %7s %7s %7s\n", "case", "variant",
              "before", "after", "iters", "clean", "strain", "s", "det", "gia", "resp", "solver",
              "prox", "limit");
  for (const std::string& file : files) {
    const ObjPieces pieces = split_pieces(read_obj(file));
    const ClothMesh mesh = ClothMesh::build(pieces.meshes);
    std::string name = file.substr(file.find_last_of('/') + 1);
    for (const Variant& variant : variants()) {
      if (!wanted(only, variant.name)) continue;
      UntangleOptions options;
      options.settings.threads = threads;
      options.max_iterations = max_iterations;
      variant.change(options);
      Positions output;
      const UntangleReport r = untangle(mesh, mesh.rest_positions, nullptr, options, output);
      const UntangleStageSeconds& t = r.stage_seconds;
      const double per = r.iterations > 0 ? 1000.0 / r.iterations : 0;
      std::printf(
          "%-22s %-16s %8zu %8zu %6d %6d %7.2f%% %8.2f %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f\n",
          name.c_str(), variant.name, r.pairs_before, r.pairs_after, r.iterations,
          r.iterations_to_clean, 100 * r.max_edge_strain, r.seconds, per * t.detection,
          per * t.analysis, per * t.response, per * t.solver, per * t.proximity,
          per * t.strain_limit);
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace
}  // namespace untangle

int main(int argc, char** argv) {
  return untangle::run(argc, argv);
}

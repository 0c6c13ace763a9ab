// `untangle detect MESH.obj`: the intersection detector on a mesh file (issue 2): intersecting
// triangle pairs, hits, contours by type, culled BVH nodes and the time of each stage.
#include <chrono>
#include <cstdio>
#include <iostream>

#include "command.hpp"
#include "engine.hpp"
#include "json.hpp"

namespace untangle::cli {

int run_detect(CommandArgs args) {
  std::string mesh_path;
  int threads = 0;
  bool json = false;
  bool no_cull = false;
  int repeat = 1;
  ArgParser parser("untangle detect MESH.obj [options]",
                   "Finds where the mesh cuts through itself: the intersecting triangle pairs\n"
                   "(pairs sharing a vertex are not tested), the edge-triangle hits, the\n"
                   "intersection contours by type, the BVH nodes skipped by normal-cone\n"
                   "culling, and the time of each stage. Each `o`/`g` group of the file that\n"
                   "shares no vertex with another is a piece; pieces are tested against each\n"
                   "other too.");
  parser.positional("MESH.obj", "the mesh (Wavefront OBJ, faces of any size)", &mesh_path)
      .option("--threads", "N", "OpenMP threads (0 = default); results do not depend on it",
              &threads, 0, 1024)
      .flag("--json", "print one JSON object instead of text", &json)
      .flag("--no-cull", "test every BVH node against itself (no normal-cone culling)", &no_cull)
      .option("--repeat", "N",
              "detect N times on the same world; with N > 1 report the fastest run after the\n"
              "first (the first skips the refit of the positions just built on, and pays for\n"
              "starting threads and touching fresh memory; default 1)",
              &repeat, 1, 1000)
      .epilog(
          "Times: build is the one-off set-up (the mesh, its BVH and the engine's world\n"
          "around them); refit, broad, narrow and contours are one detection on the\n"
          "unchanged positions (refit of the BVH, broad phase, narrow phase, contour\n"
          "tracing), the fastest of the --repeat runs, each a full refit and detection\n"
          "on the world built once, like one frame of a simulation.\n"
          "JSON keys: triangles, pairs, hits, contours {loop, boundary, crease},\n"
          "culled_nodes, seconds {build, refit, broad, narrow, contours}.");
  if (!parser.parse(args)) {
    std::cout << parser.help();
    return kExitOk;
  }

  const MeshFile file = read_mesh_file(mesh_path);
  const ObjPieces& pieces = file.pieces;
  SceneHandle scene;
  add_pieces(scene, pieces, mesh_path);

  UtSettings settings = default_settings();
  settings.cull = no_cull ? 0 : 1;
  // No proximity margin: the BVH volumes are the triangles' own, as in a one-off detect.
  settings.thickness = 0;
  apply_threads(settings, threads);
  const WorldHandle world(scene, &settings, mesh_path);
  UtFrameStats stats = empty_stats();
  auto per_frame_ms = [](const UtFrameStats& s) {
    return s.ms_refit + s.ms_broad + s.ms_narrow + s.ms_contours;
  };
  // The first run is the one-shot (no refit: the BVH was just built on these positions); the
  // warm runs after it each refit, as every frame of a simulation does.
  for (int run = 0; run < repeat; ++run) {
    check(ut_world_detect(world.get()), mesh_path);
    const UtFrameStats this_run = world.stats();
    if (run <= 1 || per_frame_ms(this_run) < per_frame_ms(stats)) stats = this_run;
  }

  const double build = stats.ms_build / 1000;
  const double refit = stats.ms_refit / 1000;
  const double broad = stats.ms_broad / 1000;
  const double narrow = stats.ms_narrow / 1000;
  const double contours = stats.ms_contours / 1000;
  if (json) {
    JsonWriter out(std::cout);
    out.begin_object()
        .field("triangles", stats.triangles)
        .field("pairs", stats.pairs)
        .field("hits", stats.hits)
        .key("contours")
        .begin_object()
        .field("loop", stats.contours_loop)
        .field("boundary", stats.contours_boundary)
        .field("crease", stats.contours_crease)
        .end_object()
        .field("culled_nodes", stats.culled_nodes)
        .key("seconds")
        .begin_object()
        .field("build", build)
        .field("refit", refit)
        .field("broad", broad)
        .field("narrow", narrow)
        .field("contours", contours)
        .end_object()
        .end_object();
    return kExitOk;
  }

  const std::uint64_t contour_count =
      stats.contours_loop + stats.contours_boundary + stats.contours_crease;
  std::printf("%s: %zu piece%s, %zu vertices, %llu triangle%s\n", mesh_path.c_str(),
              pieces.meshes.size(), pieces.meshes.size() == 1 ? "" : "s", pieces.vertex_count(),
              static_cast<unsigned long long>(stats.triangles), stats.triangles == 1 ? "" : "s");
  std::printf("  intersecting pairs  %llu\n", static_cast<unsigned long long>(stats.pairs));
  std::printf("  hits                %llu", static_cast<unsigned long long>(stats.hits));
  if (stats.dropped_hits > 0) {
    std::printf(" (%llu through a vertex or an edge, dropped)",
                static_cast<unsigned long long>(stats.dropped_hits));
  }
  std::printf("\n  contours            %llu: %llu loop, %llu boundary, %llu crease\n",
              static_cast<unsigned long long>(contour_count),
              static_cast<unsigned long long>(stats.contours_loop),
              static_cast<unsigned long long>(stats.contours_boundary),
              static_cast<unsigned long long>(stats.contours_crease));
  std::printf("  culled BVH nodes    %llu%s\n", static_cast<unsigned long long>(stats.culled_nodes),
              no_cull ? " (culling off)" : "");
  std::printf("  candidate pairs     %llu (tested by the narrow phase)\n",
              static_cast<unsigned long long>(stats.candidate_pairs));
  if (stats.degenerate_triangles + stats.duplicate_triangles + stats.non_manifold_edges > 0) {
    std::printf(
        "  mesh notes          %llu zero-area and %llu duplicate triangles (not tested), "
        "%llu non-manifold edges\n",
        static_cast<unsigned long long>(stats.degenerate_triangles),
        static_cast<unsigned long long>(stats.duplicate_triangles),
        static_cast<unsigned long long>(stats.non_manifold_edges));
  }
  std::printf(
      "  seconds             build %.6f  refit %.6f  broad %.6f  narrow %.6f  "
      "contours %.6f\n",
      build, refit, broad, narrow, contours);
  return kExitOk;
}

}  // namespace untangle::cli

// bench_detect: one frame of the detector (refit + broad + narrow phase + contours) on crumpled
// grids of 50 x 50 to 300 x 300 quads, with 1 and 2 threads; prints the 2-vs-1 thread speed-up.
// `bench_detect --write-obj DIR` instead writes the meshes of the Blender comparison
// (bench/compare_blender.py) as OBJ files; `bench_detect --obj FILE [--repeat N] [--threads N]`
// times the one-shot path on a mesh file (mesh build, BVH build, first detection, as ut_detect
// runs them) and then the fastest of N warm detections, stage by stage.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "support/crumpled_mesh.hpp"
#include "untangle/contours.hpp"
#include "untangle/detection.hpp"
#include "untangle/io/obj.hpp"

namespace {

using namespace untangle;

struct Scene {
  std::vector<PolygonMesh> pieces;
  ClothMesh mesh;
  Positions x;
  std::unique_ptr<Bvh> bvh;
  NarrowPhaseBuffers buffers;  // kept across frames, as the World does
  Intersections found;         // written over every frame, as the World does
  Contours traced;
};

// The benchmark meshes: crumpled grids (3 folds). `heavy` adds strong waves and noise, for
// tens of thousands of intersecting pairs.
std::vector<PolygonMesh> crumpled(int n, int pieces, bool heavy) {
  test::CrumpleOptions o;
  o.nx = o.ny = n;
  o.folds = heavy ? 4 : 3;
  o.wave = heavy ? 4.0 : 1.5;
  o.noise = heavy ? 0.35 : 0.1;
  o.seed = 2024 + static_cast<std::uint64_t>(n);
  return test::crumpled_pieces(o, pieces);
}

Scene& scene(int n, bool heavy) {
  static std::map<std::pair<int, bool>, std::unique_ptr<Scene>> cache;
  auto& slot = cache[{n, heavy}];
  if (!slot) {
    slot = std::make_unique<Scene>();
    slot->pieces = crumpled(n, 1, heavy);
    slot->mesh = ClothMesh::build(slot->pieces);
    slot->x = test::concatenated_positions(slot->pieces);
    slot->bvh = std::make_unique<Bvh>(slot->mesh, slot->x);
  }
  return *slot;
}

void detect_frame(benchmark::State& state, bool heavy) {
  const int n = static_cast<int>(state.range(0));
  const int threads = static_cast<int>(state.range(1));
  Scene& s = scene(n, heavy);
  omp_set_num_threads(threads);
  double refit = 0, broad = 0, narrow = 0, contours = 0;
  std::size_t pairs = 0, contour_count = 0, candidates = 0;
  for (auto _ : state) {
    const double t0 = omp_get_wtime();
    s.bvh->refit(s.x);
    const double t1 = omp_get_wtime();
    find_intersections(s.mesh, *s.bvh, s.x, {}, &s.buffers, s.found);
    trace_contours(s.mesh, s.x, s.found, s.traced);
    const Intersections& found = s.found;
    const Contours& traced = s.traced;
    refit += t1 - t0;
    broad += found.broad_seconds;
    narrow += found.narrow_seconds;
    contours += traced.seconds;
    pairs = found.pairs.size();
    candidates = found.candidate_pairs;
    contour_count = traced.contours.size();
    benchmark::DoNotOptimize(traced.contours.data());
  }
  const double frames = static_cast<double>(state.iterations());
  state.counters["triangles"] = static_cast<double>(s.mesh.triangle_count());
  state.counters["pairs"] = static_cast<double>(pairs);
  state.counters["candidates"] = static_cast<double>(candidates);
  state.counters["contours"] = static_cast<double>(contour_count);
  state.counters["refit_ms"] = 1e3 * refit / frames;
  state.counters["broad_ms"] = 1e3 * broad / frames;
  state.counters["narrow_ms"] = 1e3 * narrow / frames;
  state.counters["contours_ms"] = 1e3 * contours / frames;
}

void BM_DetectFrame(benchmark::State& state) {
  detect_frame(state, false);
}
void BM_DetectFrameHeavy(benchmark::State& state) {
  detect_frame(state, true);
}

BENCHMARK(BM_DetectFrame)
    ->ArgsProduct({{50, 100, 200, 300}, {1, 2}})
    ->ArgNames({"n", "threads"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(0.5);
BENCHMARK(BM_DetectFrameHeavy)
    ->ArgsProduct({{150}, {1, 2}})
    ->ArgNames({"n", "threads"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(0.5);

// Console output plus a closing table of the 2-vs-1 thread speed-up per mesh.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration) continue;
      // args look like "n:100/threads:2"
      const std::string args = run.run_name.args;
      const auto slash = args.find('/');
      const std::string mesh = run.run_name.function_name + " " + args.substr(0, slash);
      const int threads = std::stoi(args.substr(args.find(':', slash) + 1));
      times_[mesh][threads] = run.GetAdjustedRealTime();
      const auto it = run.counters.find("triangles");
      if (it != run.counters.end()) triangles_[mesh] = it->second.value;
    }
    ConsoleReporter::ReportRuns(runs);
  }
  void print_ratios() const {
    std::printf("\n%-28s %10s %12s %12s %10s\n", "mesh", "triangles", "1 thread ms", "2 threads ms",
                "speed-up");
    for (const auto& [mesh, by_threads] : times_) {
      if (!by_threads.count(1) || !by_threads.count(2)) continue;
      std::printf("%-28s %10.0f %12.3f %12.3f %9.2fx\n", mesh.c_str(), triangles_.at(mesh),
                  by_threads.at(1), by_threads.at(2), by_threads.at(1) / by_threads.at(2));
    }
  }

 private:
  std::map<std::string, std::map<int, double>> times_;
  std::map<std::string, double> triangles_;
};

// The meshes of the Blender comparison, named by size; one of them intersection-heavy.
int write_objs(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  struct Item {
    const char* name;
    int n, pieces;
    bool heavy;
  };
  const Item items[] = {{"crumpled_50", 50, 1, false},     {"crumpled_100", 100, 1, false},
                        {"crumpled_200", 200, 1, false},   {"crumpled_300", 300, 1, false},
                        {"two_pieces_100", 100, 2, false}, {"heavy_150", 150, 1, true}};
  for (const Item& item : items) {
    const auto pieces = crumpled(item.n, item.pieces, item.heavy);
    std::vector<std::string> names;
    for (std::size_t p = 0; p < pieces.size(); ++p) {
      names.push_back(std::string(item.name) + "_piece" + std::to_string(p));
    }
    const auto path = dir / (std::string(item.name) + ".obj");
    write_obj(path, obj_from_pieces(pieces, names), false);
    std::printf("%s\n", path.c_str());
  }
  return 0;
}

// FNV-1a over the bytes of a list: the output's fingerprint, to compare builds and thread counts.
template <class T>
std::uint64_t fnv(const std::vector<T>& items, std::uint64_t h = 14695981039346656037ull) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(items.data());
  for (std::size_t i = 0; i < items.size() * sizeof(T); ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  return h;
}

std::uint64_t fingerprint(const Detection& d) {
  const Intersections& found = d.intersections();
  std::uint64_t h = fnv(found.pairs);
  h = fnv(found.hits, h);
  h = fnv(found.segments, h);
  h = fnv(found.culled_nodes, h);
  for (const Contour& c : d.contours().contours) {
    h = fnv(c.segments, fnv(c.hits, fnv(c.side0_triangles, fnv(c.hit_edge_on_side0, h))));
  }
  return h;
}

void print_stages(const char* label, const DetectionSeconds& s) {
  std::printf("%-6s refit %8.3f  broad %8.3f  narrow %8.3f  contours %8.3f  total %8.3f ms\n",
              label, 1e3 * s.refit, 1e3 * s.broad, 1e3 * s.narrow, 1e3 * s.contours,
              1e3 * s.total());
}

// The one-shot path of ut_detect (the file is read outside the timing), then warm frames.
int time_obj(const char* path, int repeat, int threads) {
  if (threads > 0) omp_set_num_threads(threads);
  const ObjPieces pieces = split_pieces(read_obj(path));
  const double t0 = omp_get_wtime();
  const ClothMesh mesh = ClothMesh::build(pieces.meshes, MeshParts::kDetection);  // as ut_detect
  Positions x;
  for (const PolygonMesh& piece : pieces.meshes) {
    x.insert(x.end(), piece.positions.begin(), piece.positions.end());
  }
  const double t1 = omp_get_wtime();
  Detection detection(mesh, x);
  const double t2 = omp_get_wtime();
  detection.run(x);
  const double t3 = omp_get_wtime();
  std::printf("%s: %zu triangles, %zu pairs, %zu hits, %zu contours, %zu candidates\n", path,
              mesh.triangle_count(), detection.intersections().pairs.size(),
              detection.intersections().hits.size(), detection.contours().contours.size(),
              detection.intersections().candidate_pairs);
  std::printf("fingerprint %016llx\n", static_cast<unsigned long long>(fingerprint(detection)));
  std::printf("one-shot %8.3f ms: mesh %8.3f  bvh %8.3f  first detection %8.3f ms\n",
              1e3 * (t3 - t0), 1e3 * (t1 - t0), 1e3 * (t2 - t1), 1e3 * (t3 - t2));
  print_stages("first", detection.seconds());
  DetectionSeconds best = detection.seconds();
  for (int r = 0; r < repeat; ++r) {
    detection.run(x);
    if (detection.seconds().total() < best.total()) best = detection.seconds();
  }
  print_stages("warm", best);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--write-obj") == 0) return write_objs(argv[i + 1]);
  }
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--obj") != 0) continue;
    int repeat = 20, threads = 0;
    for (int k = 1; k + 1 < argc; ++k) {
      if (std::strcmp(argv[k], "--repeat") == 0) repeat = std::atoi(argv[k + 1]);
      if (std::strcmp(argv[k], "--threads") == 0) threads = std::atoi(argv[k + 1]);
    }
    return time_obj(argv[i + 1], repeat, threads);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.print_ratios();
  benchmark::Shutdown();
  return 0;
}

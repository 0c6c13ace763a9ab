// The untangler's cost: one tangled state (`untangle fix`) and a cache frame by frame
// (`untangle bake`) on folded sheets whose back half bulges through the front in a ridge, from
// 2,500 to 10,000 vertices. Counters: intersections before and after, pipeline frames, strain,
// and for the sequence seconds per frame, carried against independent.
#include <benchmark/benchmark.h>

#include <cmath>

#include "untangle/untangler.hpp"

namespace untangle {
namespace {

// side x side particles at spacing 0.05: the front half flat in z = 0, the back half folded under
// it 0.02 below with a ridge rising 0.045 through the front, centred at ridge_x (0..1 across).
PolygonMesh folded_ridge(Index side, double ridge_x) {
  const double s = 0.05;
  const double width = (side - 1) * s;
  const Index half = side / 2;
  return quad_grid(side, side, [&](Index i, Index j) {
    if (j < half) return Vec3(i * s, j * s, 0.0);
    const double x = i * s + 0.31 * s, y = (side - 1 - j) * s + 0.5 * s;
    const double dx = (x - ridge_x * width) / (0.18 * width);
    const double dy = (y - 0.45 * half * s) / (0.08 * width);
    return Vec3(x, y, -0.02 + 0.045 * std::exp(-dx * dx - dy * dy));
  });
}

void BM_UntangleOneState(benchmark::State& state) {
  const Index side = static_cast<Index>(state.range(0));
  const ClothMesh mesh = ClothMesh::build(std::vector{folded_ridge(side, 0.5)});
  UntangleOptions options;
  options.settings.threads = static_cast<int>(state.range(1));
  UntangleReport report;
  for (auto _ : state) {
    Positions output;
    report = untangle(mesh, mesh.rest_positions, nullptr, options, output);
    benchmark::DoNotOptimize(output.data());
  }
  state.counters["vertices"] = static_cast<double>(mesh.vertex_count());
  state.counters["pairs_before"] = static_cast<double>(report.pairs_before);
  state.counters["pairs_after"] = static_cast<double>(report.pairs_after);
  state.counters["iterations"] = report.iterations;
  state.counters["strain"] = report.max_edge_strain;
}
BENCHMARK(BM_UntangleOneState)
    ->ArgsProduct({{50, 100}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// A 24-frame cache: the ridge slides across the sheet, a tangle that persists in every frame.
void BM_UntangleSequence(benchmark::State& state) {
  const Index side = static_cast<Index>(state.range(0));
  const bool independent = state.range(1) != 0;
  const int frame_count = 24;
  const ClothMesh mesh = ClothMesh::build(std::vector{folded_ridge(side, 0.4)});
  std::vector<Positions> frames;
  for (int f = 0; f < frame_count; ++f) {
    frames.push_back(
        ClothMesh::build(std::vector{folded_ridge(side, 0.4 + 0.01 * f)}).rest_positions);
  }
  UntangleOptions options;
  options.settings.threads = 2;
  SequenceReport report;
  for (auto _ : state) {
    std::vector<Positions> output;
    report = untangle_sequence(mesh, frames, options, independent, output);
    benchmark::DoNotOptimize(output.data());
  }
  std::size_t worst_after = 0, iterations = 0;
  double strain = 0;
  for (const UntangleReport& frame : report.frames) {
    worst_after = std::max(worst_after, frame.pairs_after);
    iterations += static_cast<std::size_t>(frame.iterations);
    strain = std::max(strain, frame.max_edge_strain);
  }
  state.counters["vertices"] = static_cast<double>(mesh.vertex_count());
  state.counters["s_per_frame"] =
      benchmark::Counter(static_cast<double>(frame_count * state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["max_pairs_after"] = static_cast<double>(worst_after);
  state.counters["iterations_per_frame"] = static_cast<double>(iterations) / frame_count;
  state.counters["strain"] = strain;
}
BENCHMARK(BM_UntangleSequence)
    ->ArgsProduct({{100}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);

}  // namespace
}  // namespace untangle

BENCHMARK_MAIN();

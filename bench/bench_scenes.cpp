// Per-frame cost of the three scenes (World::step: detection, response, solver, velocities) on 1
// and 2 threads, with untangling on (ICM) and off. Each world first runs 120 frames untimed, so
// the timing covers cloth in contact rather than the free fall. Reports ms per frame, the ratio
// of 1 to 2 threads is read off the two rows, and the mean intersecting pairs per timed frame.
#include <benchmark/benchmark.h>

#include <array>
#include <string>

#include "untangle/scenes.hpp"
#include "untangle/world.hpp"

namespace {

using untangle::World;

constexpr std::array<const char*, 3> kScenes{"tangled-start", "dropped-cloth", "two-sheets"};
constexpr int kWarmUpFrames = 120;

void scene_frames(benchmark::State& state) {
  untangle::Scene scene = untangle::make_scene(kScenes[state.range(0)]);
  scene.settings.threads = static_cast<int>(state.range(1));
  scene.settings.untangle = state.range(2) != 0;
  World world(scene);
  for (int frame = 0; frame < kWarmUpFrames; ++frame) world.step();
  double pairs = 0, proximity = 0, solve = 0;
  for (auto _ : state) {
    world.step();
    pairs += static_cast<double>(world.stats().pairs);
    proximity += world.stats().seconds.proximity;
    solve += world.stats().seconds.solve;
  }
  const double frames = static_cast<double>(state.iterations());
  state.counters["pairs"] = pairs / frames;
  state.counters["solve_ms"] = 1e3 * solve / frames;
  state.counters["proximity_ms"] = 1e3 * proximity / frames;
  state.SetLabel(std::string(kScenes[state.range(0)]) +
                 (scene.settings.untangle ? " icm" : " off") + ", " +
                 std::to_string(state.range(1)) + " thread(s)");
}

BENCHMARK(scene_frames)
    ->ArgNames({"scene", "threads", "untangle"})
    ->ArgsProduct({{0, 1, 2}, {1, 2}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(200)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();

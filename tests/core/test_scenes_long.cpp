// Scenes over long runs (CTest label no-sanitize: thousands of frames): each scene runs 2,000
// frames with its default settings without a NaN and within the speed limit; the dropped cloth
// comes to rest on the sphere and the ground; and with untangling off the dropped cloth and the
// two sheets build intersections that last (the SPEC's baseline, about 10 and about 20 pairs per
// frame), measured over the second half of 400 frames and printed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "untangle/scenes.hpp"
#include "untangle/world.hpp"

namespace untangle {
namespace {

struct SceneRun {
  std::vector<std::size_t> pairs;
  std::vector<double> mean_speed;  // sqrt(2 KE / M): the root mean square speed
  double max_kinetic_energy = 0;
};

SceneRun run(const Scene& scene, int frames) {
  World world(scene);
  double mass = 0;
  for (double w : world.inverse_mass()) mass += w > 0 ? 1 / w : 0;
  SceneRun result;
  for (int frame = 0; frame < frames; ++frame) {
    world.step();
    for (const Vec3& p : world.positions()) EXPECT_TRUE(p.allFinite()) << frame;
    for (const Vec3& v : world.velocities()) {
      EXPECT_LE(v.norm(), world.settings().max_speed * (1 + 1e-12)) << frame;
    }
    if (::testing::Test::HasFailure()) break;
    result.pairs.push_back(world.stats().pairs);
    result.mean_speed.push_back(std::sqrt(2 * world.stats().kinetic_energy / mass));
    result.max_kinetic_energy = std::max(result.max_kinetic_energy, world.stats().kinetic_energy);
  }
  return result;
}

double mean_of_second_half(const std::vector<std::size_t>& values) {
  double sum = 0;
  for (std::size_t i = values.size() / 2; i < values.size(); ++i) sum += double(values[i]);
  return sum / double(values.size() - values.size() / 2);
}

TEST(ScenesLong, TangledStartRunsTwoThousandFrames) {
  const SceneRun result = run(tangled_start(), 2000);
  ASSERT_EQ(result.pairs.size(), 2000u);
  std::printf("tangled-start: final pairs %zu, max kinetic energy %.3g J\n", result.pairs.back(),
              result.max_kinetic_energy);
}

TEST(ScenesLong, TwoSheetsRunTwoThousandFrames) {
  const SceneRun result = run(two_sheets(), 2000);
  ASSERT_EQ(result.pairs.size(), 2000u);
  std::printf("two-sheets: final pairs %zu, max kinetic energy %.3g J\n", result.pairs.back(),
              result.max_kinetic_energy);
}

TEST(ScenesLong, DroppedClothComesToRestOnTheSphereAndGround) {
  const SceneRun result = run(dropped_cloth(), 2000);
  ASSERT_EQ(result.pairs.size(), 2000u);
  double speed = 0;
  for (std::size_t i = 1900; i < 2000; ++i) speed += result.mean_speed[i] / 100;
  std::printf("dropped-cloth: mean speed of the last 100 frames %.4f m/s\n", speed);
  EXPECT_LT(speed, 0.05);
  // It fell: the speed was far above the bound on the way down.
  EXPECT_GT(*std::max_element(result.mean_speed.begin(), result.mean_speed.end()), 1.0);
}

TEST(ScenesLong, WithoutUntanglingDroppedClothAndTwoSheetsKeepIntersections) {
  for (const char* name : {"dropped-cloth", "two-sheets"}) {
    Scene scene = make_scene(name);
    scene.settings.untangle = false;
    const SceneRun result = run(scene, 400);
    ASSERT_EQ(result.pairs.size(), 400u);
    const double mean = mean_of_second_half(result.pairs);
    std::size_t frames_with_pairs = 0;
    for (std::size_t i = 200; i < 400; ++i) frames_with_pairs += result.pairs[i] > 0;
    std::printf(
        "%s, untangling off: mean pairs over frames 200-399 %.2f, %zu of 200 frames with "
        "pairs, final %zu\n",
        name, mean, frames_with_pairs, result.pairs.back());
    // Lasting: intersections in (nearly) every frame of the second half, several pairs each.
    EXPECT_GE(mean, 3.0) << name;
    EXPECT_GE(frames_with_pairs, 190u) << name;
  }
}

}  // namespace
}  // namespace untangle

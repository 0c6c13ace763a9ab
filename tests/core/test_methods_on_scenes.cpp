// Every untangling method on every scene, through World (short runs): no NaN leaves the
// pipeline, the result does not depend on the thread count, and Buffet's layer response does
// nothing on a single sheet but acts on two.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "untangle/scenes.hpp"
#include "untangle/world.hpp"

namespace untangle {
namespace {

constexpr int kFrames = 6;

// The scene, except that the two sheets start crossing: a dent of the upper sheet reaches
// through the lower one, so that every method has something to answer within a short run.
Scene crossing_scene(const std::string& scene_name) {
  Scene scene = make_scene(scene_name);
  if (scene_name != "two-sheets") return scene;
  scene.initial_positions.clear();
  for (const PolygonMesh& piece : scene.pieces) {
    scene.initial_positions.insert(scene.initial_positions.end(), piece.positions.begin(),
                                   piece.positions.end());
  }
  const std::size_t upper = scene.pieces[0].positions.size();
  for (std::size_t v = upper; v < scene.initial_positions.size(); ++v) {
    Vec3& p = scene.initial_positions[v];
    if (p.head<2>().norm() < 0.35) p.z() -= 0.2;
  }
  return scene;
}

Positions run(const std::string& scene_name, Method method, bool untangle, int threads) {
  Scene scene = crossing_scene(scene_name);
  scene.settings.method = method;
  scene.settings.untangle = untangle;
  scene.settings.threads = threads;
  World world(scene);
  for (int frame = 0; frame < kFrames; ++frame) world.step();
  return world.positions();
}

class MethodOnScene : public ::testing::TestWithParam<std::tuple<std::string, Method>> {};

// The same run with 1 and 2 threads ends in bit-identical positions, all finite.
TEST_P(MethodOnScene, FiniteAndThreadCountIndependent) {
  const auto& [scene, method] = GetParam();
  const Positions one = run(scene, method, true, 1);
  const Positions two = run(scene, method, true, 2);
  ASSERT_EQ(one.size(), two.size());
  for (std::size_t v = 0; v < one.size(); ++v) {
    ASSERT_TRUE(one[v].allFinite()) << "vertex " << v;
    ASSERT_EQ(one[v], two[v]) << "vertex " << v << " differs between 1 and 2 threads";
  }
}

INSTANTIATE_TEST_SUITE_P(AllMethodsAllScenes, MethodOnScene,
                         ::testing::Combine(::testing::Values("tangled-start", "dropped-cloth",
                                                              "two-sheets"),
                                            ::testing::Values(Method::kIcm, Method::kKikuchi,
                                                              Method::kYe, Method::kBuffet)),
                         [](const auto& info) {
                           std::string name = std::get<0>(info.param) + "_" +
                                              std::string(method_name(std::get<1>(info.param)));
                           for (char& c : name) c = c == '-' ? '_' : c;
                           return name;
                         });

// One sheet has no layers to order: Buffet leaves the tangled start exactly as the run with
// untangling off. On the crossing two sheets it acts.
TEST(MethodsOnScenes, BuffetActsOnlyWithTwoSheets) {
  EXPECT_EQ(run("tangled-start", Method::kBuffet, true, 0),
            run("tangled-start", Method::kBuffet, false, 0));
  EXPECT_NE(run("two-sheets", Method::kBuffet, true, 0),
            run("two-sheets", Method::kBuffet, false, 0));
}

}  // namespace
}  // namespace untangle

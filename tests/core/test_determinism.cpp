// The same result on any machine (issue 21): each scene under each method, run 100 frames at 1
// and at 2 threads, must end in exactly the state whose hash is written here. The per-frame path
// uses no libm transcendental (see portable_math.hpp) and core is built without fused
// multiply-adds, so these constants hold on every x86-64 CPU; a change that alters them on
// purpose (a new rule, a changed constant) updates them and says so in its commit.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "untangle/scenes.hpp"
#include "untangle/world.hpp"

namespace untangle {
namespace {

// FNV-1a over the bytes of every coordinate.
std::uint64_t hash_of(const Positions& x) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const Vec3& p : x) {
    for (int k = 0; k < 3; ++k) {
      unsigned char bytes[sizeof(double)];
      const double value = p[k];
      std::memcpy(bytes, &value, sizeof value);
      for (unsigned char b : bytes) {
        h ^= b;
        h *= 0x100000001b3ULL;
      }
    }
  }
  return h;
}

std::uint64_t run(const std::string& scene_name, Method method, int threads) {
  Scene scene = make_scene(scene_name);
  scene.settings.method = method;
  scene.settings.threads = threads;
  World world(scene);
  for (int frame = 0; frame < 100; ++frame) world.step();
  return hash_of(world.positions());
}

struct Pinned {
  const char* scene;
  Method method;
  std::uint64_t hash;
};

TEST(Determinism, EachSceneAndMethodEndsInThePinnedStateAtOneAndTwoThreads) {
  const Pinned pinned[] = {
      {"tangled-start", Method::kIcm, 0x74d01f974f16ab2fULL},
      {"tangled-start", Method::kKikuchi, 0xd82c466c2f789867ULL},
      {"tangled-start", Method::kYe, 0xd0cca2de9d8e292dULL},
      {"tangled-start", Method::kBuffet, 0xb58e9a48dddd1d8bULL},
      {"dropped-cloth", Method::kIcm, 0x11dbdc9d8050a640ULL},
      {"dropped-cloth", Method::kKikuchi, 0x98d9aee8defa0090ULL},
      {"dropped-cloth", Method::kYe, 0x929e32527fd2caeeULL},
      {"dropped-cloth", Method::kBuffet, 0x653a125803e3bde2ULL},
      {"two-sheets", Method::kIcm, 0xc4eab3555a1e999aULL},
      {"two-sheets", Method::kKikuchi, 0xe7de48060eede2c0ULL},
      {"two-sheets", Method::kYe, 0x10b6d560993f9d09ULL},
      {"two-sheets", Method::kBuffet, 0xaa724f91e1f98154ULL},
  };
  for (const Pinned& p : pinned) {
    for (int threads : {1, 2}) {
      EXPECT_EQ(run(p.scene, p.method, threads), p.hash)
          << p.scene << " / " << method_name(p.method) << " at " << threads << " threads";
    }
  }
}

}  // namespace
}  // namespace untangle

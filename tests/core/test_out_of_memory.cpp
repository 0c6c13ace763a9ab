// Out of memory inside the parallel parts: an allocation that fails on an OpenMP thread must come
// back to the caller as std::bad_alloc (which the C ABI turns into UT_ERROR_OUT_OF_MEMORY), not
// end the host program through std::terminate. The frame pipeline (BVH, narrow phase, contours,
// proximity, each response) runs with each place its parallel regions allocate from failing in
// turn (support/failing_allocator.hpp).
#include <gtest/gtest.h>
#include <omp.h>

#include "support/failing_allocator.hpp"
#include "untangle/scenes.hpp"
#include "untangle/world.hpp"

namespace untangle {
namespace {

using failing_allocator::Site;

// The first frame of a fresh world: every per-frame buffer is still empty, so each parallel
// part allocates (later frames reuse what the first one grew).
Scene tangled_start(Method method) {
  Scene scene = make_scene("tangled-start");
  scene.settings.method = method;
  scene.settings.threads = 2;
  return scene;
}

class OutOfMemory : public ::testing::TestWithParam<Method> {};

TEST_P(OutOfMemory, EachParallelAllocationThatFailsComesBackAsBadAlloc) {
  omp_set_num_threads(2);
  const Scene scene = tangled_start(GetParam());
  World recorded(scene);
  const std::vector<Site> sites =
      failing_allocator::parallel_allocation_sites([&] { recorded.step(); });
  ASSERT_GE(sites.size(), 3u) << "the frame should allocate in several parallel parts";
  int thrown = 0;
  for (const Site& site : sites) {
    // Its 1st, 2nd, 4th, ... allocation: one place (a vector's growth) serves several regions.
    for (long n = 1; n <= site.allocations; n *= 2) {
      World world(scene);
      failing_allocator::fail_at(site, n);
      bool threw = false;
      try {
        world.step();
      } catch (const std::bad_alloc&) {
        threw = true;
      }
      failing_allocator::disarm();
      // Thrown exactly when the failure came: nothing swallowed it on the way.
      ASSERT_EQ(threw, failing_allocator::fired()) << "allocation " << n << " of " << site.caller;
      thrown += threw ? 1 : 0;
      // The world is still usable: the next frame runs, and nothing it holds is NaN.
      world.step();
      for (const Vec3& p : world.positions()) {
        ASSERT_TRUE(p.allFinite()) << "allocation " << n << " of place " << site.caller;
      }
    }
  }
  EXPECT_GT(thrown, 0);
}

// The world's construction (the BVH's topology pass runs in parallel): a failure there comes
// back from the constructor, and a world built afterwards is as good as ever.
TEST(OutOfMemoryBuilding, EachParallelAllocationThatFailsComesBackAsBadAlloc) {
  omp_set_num_threads(2);
  const Scene scene = tangled_start(Method::kIcm);
  const std::vector<Site> sites =
      failing_allocator::parallel_allocation_sites([&] { World recorded(scene); });
  ASSERT_FALSE(sites.empty()) << "the construction should allocate in a parallel part";
  for (const Site& site : sites) {
    for (long n = 1; n <= site.allocations; n *= 2) {
      failing_allocator::fail_at(site, n);
      bool threw = false;
      try {
        World world(scene);
      } catch (const std::bad_alloc&) {
        threw = true;
      }
      failing_allocator::disarm();
      ASSERT_EQ(threw, failing_allocator::fired()) << "allocation " << n << " of " << site.caller;
    }
  }
  World world(scene);
  world.step();
  for (const Vec3& p : world.positions()) ASSERT_TRUE(p.allFinite());
}

INSTANTIATE_TEST_SUITE_P(Methods, OutOfMemory,
                         ::testing::Values(Method::kIcm, Method::kKikuchi, Method::kYe,
                                           Method::kBuffet),
                         [](const ::testing::TestParamInfo<Method>& info) {
                           return std::string(method_name(info.param));
                         });

}  // namespace
}  // namespace untangle

// Out of memory through the C ABI: an allocation that fails inside the library's parallel parts
// comes back as UT_ERROR_OUT_OF_MEMORY with a message, the handle stays usable, and the host
// program goes on (an exception leaving an OpenMP thread would have ended it). The replaced
// operator new of this program also serves libuntangle.so, which imports it.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "../core/support/failing_allocator.hpp"
#include "untangle.h"

namespace {

using failing_allocator::Site;

struct WorldOwner {
  UtWorld* world = nullptr;
  WorldOwner() {
    UtSettings settings;
    settings.struct_size = sizeof settings;
    EXPECT_EQ(ut_scene_settings("tangled-start", &settings), UT_OK) << ut_last_error();
    settings.threads = 2;
    EXPECT_EQ(ut_world_create_scene("tangled-start", &settings, &world), UT_OK) << ut_last_error();
  }
  ~WorldOwner() { ut_world_destroy(world); }
  WorldOwner(const WorldOwner&) = delete;
  WorldOwner& operator=(const WorldOwner&) = delete;
};

TEST(CapiOutOfMemory, AFailedAllocationInAFrameIsReportedAndTheWorldGoesOn) {
  WorldOwner recorded;
  const std::vector<Site> sites = failing_allocator::parallel_allocation_sites(
      [&] { ASSERT_EQ(ut_world_step(recorded.world, 1), UT_OK) << ut_last_error(); });
  ASSERT_GE(sites.size(), 3u) << "the frame should allocate in several parallel parts";
  int out_of_memory = 0;
  for (const Site& site : sites) {
    WorldOwner owner;
    failing_allocator::fail_at(site, 1);
    const UtStatus status = ut_world_step(owner.world, 1);
    failing_allocator::disarm();
    ASSERT_EQ(status, failing_allocator::fired() ? UT_ERROR_OUT_OF_MEMORY : UT_OK)
        << ut_status_name(status) << ": " << ut_last_error();
    if (status == UT_ERROR_OUT_OF_MEMORY) {
      ++out_of_memory;
      EXPECT_EQ(std::string(ut_last_error()), "out of memory");
    }
    ASSERT_EQ(ut_world_step(owner.world, 1), UT_OK) << ut_last_error();
    std::size_t count = 0;
    ASSERT_EQ(ut_world_vertex_count(owner.world, UT_ALL_PIECES, &count), UT_OK);
    std::vector<float> positions(3 * count);
    ASSERT_EQ(ut_world_get_positions(owner.world, UT_ALL_PIECES, positions.data(), count, 0), UT_OK)
        << ut_last_error();
    for (float v : positions) ASSERT_TRUE(std::isfinite(v));
  }
  EXPECT_GT(out_of_memory, 0);
}

}  // namespace

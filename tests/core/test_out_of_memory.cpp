// Out of memory inside the parallel parts: an allocation that fails on an OpenMP thread must come
// back to the caller as std::bad_alloc (which the C ABI turns into UT_ERROR_OUT_OF_MEMORY), not
// end the host program through std::terminate. This file replaces the global operator new with
// one that records where the parallel regions allocate (the code address that called it) and can
// be told to fail the n-th allocation from one such place; the frame pipeline (BVH, narrow
// phase, contours, proximity, each response) then runs with each place failing in turn.
#include <gtest/gtest.h>
#include <omp.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

#include "untangle/scenes.hpp"
#include "untangle/world.hpp"

namespace {

struct Site {
  const void* caller = nullptr;
  long allocations = 0;
};

// Fixed storage: the recorder must not allocate (it runs inside operator new).
std::mutex g_sites_mutex;
std::array<Site, 512> g_sites;
std::size_t g_site_count = 0;
std::atomic<bool> g_recording{false};
std::atomic<const void*> g_fail_caller{nullptr};  // the place that fails; nullptr: none
std::atomic<long> g_fail_occurrence{0};           // at its n-th allocation since armed
std::atomic<long> g_seen{0};

void record(const void* caller) {
  const std::lock_guard<std::mutex> lock(g_sites_mutex);
  for (std::size_t i = 0; i < g_site_count; ++i) {
    if (g_sites[i].caller == caller) {
      ++g_sites[i].allocations;
      return;
    }
  }
  if (g_site_count < g_sites.size()) g_sites[g_site_count++] = {caller, 1};
}

void* allocate(std::size_t size, std::size_t alignment, const void* caller) {
  if (omp_in_parallel()) {
    if (g_recording.load()) record(caller);
    if (caller == g_fail_caller.load() && g_seen.fetch_add(1) + 1 == g_fail_occurrence.load()) {
      throw std::bad_alloc();
    }
  }
  size = size == 0 ? 1 : size;
  void* p = alignment <= alignof(std::max_align_t)
                ? std::malloc(size)
                : std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

#define CALLER __builtin_return_address(0)
void* operator new(std::size_t size) {
  return allocate(size, 0, CALLER);
}
void* operator new[](std::size_t size) {
  return allocate(size, 0, CALLER);
}
void* operator new(std::size_t size, std::align_val_t a) {
  return allocate(size, static_cast<std::size_t>(a), CALLER);
}
void* operator new[](std::size_t size, std::align_val_t a) {
  return allocate(size, static_cast<std::size_t>(a), CALLER);
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return allocate(size, 0, CALLER);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return allocate(size, 0, CALLER);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
#undef CALLER
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}

namespace untangle {
namespace {

// The first frame of a fresh world: every per-frame buffer is still empty, so each parallel
// part allocates (later frames reuse what the first one grew).
Scene tangled_start(Method method) {
  Scene scene = make_scene("tangled-start");
  scene.settings.method = method;
  scene.settings.threads = 2;
  return scene;
}

// Where the parallel parts of a fresh world's first frame allocate, and how often.
std::vector<Site> parallel_allocation_sites(const Scene& scene) {
  World world(scene);
  g_site_count = 0;
  g_recording = true;
  world.step();
  g_recording = false;
  return {g_sites.begin(), g_sites.begin() + static_cast<std::ptrdiff_t>(g_site_count)};
}

class OutOfMemory : public ::testing::TestWithParam<Method> {};

TEST_P(OutOfMemory, EachParallelAllocationThatFailsComesBackAsBadAlloc) {
  omp_set_num_threads(2);
  const Scene scene = tangled_start(GetParam());
  const std::vector<Site> sites = parallel_allocation_sites(scene);
  ASSERT_GE(sites.size(), 3u) << "the frame should allocate in several parallel parts";
  int runs = 0, thrown = 0;
  for (const Site& site : sites) {
    // Its 1st, 2nd, 4th, ... allocation: one place (a vector's growth) serves several regions.
    for (long n = 1; n <= site.allocations; n *= 2) {
      World world(scene);
      g_seen = 0;
      g_fail_occurrence = n;
      g_fail_caller = site.caller;
      bool threw = false;
      try {
        world.step();
      } catch (const std::bad_alloc&) {
        threw = true;
      }
      g_fail_caller = nullptr;
      ++runs;
      thrown += threw ? 1 : 0;
      // The world is still usable: the next frame runs, and nothing it holds is NaN.
      world.step();
      for (const Vec3& p : world.positions()) {
        ASSERT_TRUE(p.allFinite()) << "allocation " << n << " of place " << site.caller;
      }
    }
  }
  // With two threads a place may allocate a little less often than in the recorded frame.
  EXPECT_GT(thrown, runs * 3 / 4) << thrown << " of " << runs << " runs threw";
}

INSTANTIATE_TEST_SUITE_P(Methods, OutOfMemory,
                         ::testing::Values(Method::kIcm, Method::kKikuchi, Method::kYe,
                                           Method::kBuffet),
                         [](const ::testing::TestParamInfo<Method>& info) {
                           return std::string(method_name(info.param));
                         });

}  // namespace
}  // namespace untangle

// A replaced global operator new for the out-of-memory tests: it records the places (the code
// address that called it) from which OpenMP parallel regions allocate, and can be told to fail
// the n-th allocation from one of them with std::bad_alloc. It also serves the allocations of a
// shared library the test links (libuntangle.so imports operator new). Include it in exactly one
// file of a test program: it defines the replacements.
#pragma once

#include <omp.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

namespace failing_allocator {

struct Site {
  const void* caller = nullptr;
  long allocations = 0;
};

namespace detail {

// Fixed storage: the recorder must not allocate (it runs inside operator new).
inline std::mutex sites_mutex;
inline std::array<Site, 512> sites;
inline std::size_t site_count = 0;
inline std::atomic<bool> recording{false};
inline std::atomic<const void*> fail_caller{nullptr};  // the place that fails; nullptr: none
inline std::atomic<long> fail_occurrence{0};           // at its n-th allocation since armed
inline std::atomic<long> seen{0};
inline std::atomic<bool> fired{false};  // an armed failure was thrown

inline void record(const void* caller) {
  const std::lock_guard<std::mutex> lock(sites_mutex);
  for (std::size_t i = 0; i < site_count; ++i) {
    if (sites[i].caller == caller) {
      ++sites[i].allocations;
      return;
    }
  }
  if (site_count < sites.size()) sites[site_count++] = {caller, 1};
}

inline void* allocate(std::size_t size, std::size_t alignment, const void* caller) {
  if (omp_in_parallel()) {
    if (recording.load()) record(caller);
    if (caller == fail_caller.load() && seen.fetch_add(1) + 1 == fail_occurrence.load()) {
      fired = true;
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

}  // namespace detail

// The places the parallel regions of run() allocate from, and how often.
template <class Run>
std::vector<Site> parallel_allocation_sites(Run&& run) {
  detail::site_count = 0;
  detail::recording = true;
  run();
  detail::recording = false;
  return {detail::sites.begin(),
          detail::sites.begin() + static_cast<std::ptrdiff_t>(detail::site_count)};
}

// From now on, the n-th parallel allocation from `site` fails.
inline void fail_at(const Site& site, long n) {
  detail::seen = 0;
  detail::fired = false;
  detail::fail_occurrence = n;
  detail::fail_caller = site.caller;
}

inline void disarm() {
  detail::fail_caller = nullptr;
}

// Whether the armed allocation failed (it may not come: with two threads a place can allocate
// less often than in the recorded run).
inline bool fired() {
  return detail::fired.load();
}

}  // namespace failing_allocator

#define FAILING_ALLOCATOR_CALLER __builtin_return_address(0)
void* operator new(std::size_t size) {
  return failing_allocator::detail::allocate(size, 0, FAILING_ALLOCATOR_CALLER);
}
void* operator new[](std::size_t size) {
  return failing_allocator::detail::allocate(size, 0, FAILING_ALLOCATOR_CALLER);
}
void* operator new(std::size_t size, std::align_val_t a) {
  return failing_allocator::detail::allocate(size, static_cast<std::size_t>(a),
                                             FAILING_ALLOCATOR_CALLER);
}
void* operator new[](std::size_t size, std::align_val_t a) {
  return failing_allocator::detail::allocate(size, static_cast<std::size_t>(a),
                                             FAILING_ALLOCATOR_CALLER);
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return failing_allocator::detail::allocate(size, 0, FAILING_ALLOCATOR_CALLER);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return failing_allocator::detail::allocate(size, 0, FAILING_ALLOCATOR_CALLER);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
#undef FAILING_ALLOCATOR_CALLER
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

// Why: a fresh process pays one page fault per 4 KiB it touches for the first time, about 10 us
// each on a virtual machine (measured here), so building a 12k-triangle mesh's BVH and first
// detection spent most of its time in the kernel. glibc's defaults make it worse: each large
// vector is its own mmap, returned on free, so a temporary and its successor fault twice, and the
// worker threads allocate from heaps of their own. This policy gives the program one heap that
// grows by a large reserve and keeps what is freed, advised as transparent huge pages (one fault
// per 2 MiB where the kernel allows them; with THP off it only saves the repeated faults). The
// library leaves the process's allocator alone: a host such as Blender owns its own.
#include "heap_policy.hpp"

#include <cstdlib>  // first: defines __GLIBC__ where glibc is the C library

// A sanitizer brings its own allocator: the policy is for glibc's.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define UNTANGLE_SANITIZED_ALLOCATOR 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNTANGLE_SANITIZED_ALLOCATOR 1
#endif

#if defined(__linux__) && defined(__GLIBC__) && !defined(UNTANGLE_SANITIZED_ALLOCATOR)
#include <malloc.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#define UNTANGLE_LARGE_PAGE_HEAP 1
#endif

namespace untangle::cli {

#if defined(UNTANGLE_LARGE_PAGE_HEAP)
void use_large_page_heap() {
  // Virtual address space only: pages are backed when first touched. Under a limit on the
  // address space or the data segment (a farm worker, a container) every growth by the reserve
  // could fail, so the policy stays off there.
  constexpr int kReserve = 512 << 20;
  constexpr std::uintptr_t kHugePage = 2 << 20;
  const auto unlimited = [](auto resource) {
    rlimit limit{};
    return getrlimit(resource, &limit) == 0 && limit.rlim_cur == RLIM_INFINITY;
  };
  if (!unlimited(RLIMIT_AS) || !unlimited(RLIMIT_DATA)) return;
  mallopt(M_ARENA_MAX, 1);                  // worker threads share the main heap
  mallopt(M_MMAP_THRESHOLD, 32 << 20);      // glibc's largest: bigger blocks are still mmaps
  mallopt(M_TRIM_THRESHOLD, 2 * kReserve);  // freed memory stays for the next vector
  mallopt(M_TOP_PAD, kReserve);             // the heap grows by the reserve at once
  // Grow the heap now (a block larger than what the heap holds makes it grow, by the reserve),
  // then advise the part above that block's start: the program's allocations to come.
  void* probe = std::malloc(kHugePage);
  if (probe == nullptr) {
    mallopt(M_TOP_PAD, 128 << 10);  // glibc's default: grow as needed
    return;
  }
  const auto begin = (reinterpret_cast<std::uintptr_t>(probe) + kHugePage) & ~(kHugePage - 1);
  std::free(probe);
  const auto end = reinterpret_cast<std::uintptr_t>(sbrk(0)) & ~(kHugePage - 1);
  // Advice only: where it is refused (THP off, the block not on the heap), the program runs as
  // before.
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}
#else
void use_large_page_heap() {}
#endif

}  // namespace untangle::cli

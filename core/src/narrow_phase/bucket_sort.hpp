// A counting sort over dense bucket keys (edges, triangles), parallel and with the result of one
// thread: the narrow phase's gather of hits and pair records.
#pragma once

#include <omp.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "../parallel_errors.hpp"

namespace untangle::narrow {

// bucket_sort takes std::sort below one item per this many buckets.
constexpr std::size_t kFewItemsPerBucket = 8;

// Sorted by (bucket, then `less` within a bucket) with a counting sort over the buckets: linear
// for keys whose first part is a dense index (an edge, a triangle) and buckets of a few items.
// Two parallel passes, each reading every item once: the items are first split by bucket range
// (ranges of 2^shift consecutive buckets), chunk by chunk in their order; then each range is
// counting-sorted on its own. No write is shared and the result is that of one thread (and of any
// split), as no two items compare equal (a hit reference is unique by its block and index, a
// pair record by its triangles: each triangle pair belongs to one leaf pair).
// Items much fewer than buckets (a clean or nearly clean state, as in most of a bake's checks)
// are sorted by one std::sort instead: the passes over all buckets would cost more.
// `items` is consumed (left in an unspecified order); `sorted` and `begin` are the caller's,
// kept between calls.
template <class T, class BucketOf, class Less>
void bucket_sort(std::vector<T>& items, std::size_t bucket_count, BucketOf bucket_of, Less less,
                 std::vector<T>& sorted, std::vector<std::uint32_t>& begin) {
  if (items.empty()) {
    sorted.clear();
    return;
  }
  if (items.size() < bucket_count / kFewItemsPerBucket) {
    sorted.assign(items.begin(), items.end());
    std::sort(sorted.begin(), sorted.end(), [&](const T& x, const T& y) {
      const std::size_t bx = bucket_of(x), by = bucket_of(y);
      return bx < by || (bx == by && less(x, y));
    });
    return;
  }
  // A few ranges and chunks per thread, so that uneven ones still share the work out.
  const auto parts = 4 * static_cast<std::size_t>(omp_get_max_threads());
  const auto shift = static_cast<unsigned>(std::bit_width((bucket_count - 1) / parts));
  const std::size_t ranges = ((bucket_count - 1) >> shift) + 1;
  const std::size_t n = items.size();
  const std::size_t chunks = std::min(parts, n);
  // at[c * ranges + r]: first the items of chunk c in range r, then where they go in `sorted`.
  std::vector<std::uint32_t> at(chunks * ranges, 0);
  std::vector<std::uint32_t> range_begin(ranges + 1, 0);
  sorted.resize(n);
  begin.resize(bucket_count + 1);
  begin[0] = 0;
  ParallelErrors errors;
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (std::size_t c = 0; c < chunks; ++c) {
      std::uint32_t* count = at.data() + c * ranges;
      for (std::size_t i = n * c / chunks; i < n * (c + 1) / chunks; ++i) {
        ++count[bucket_of(items[i]) >> shift];
      }
    }
#pragma omp single
    {
      std::uint32_t sum = 0;  // range-major, chunk-minor: each range's items in chunk order
      for (std::size_t r = 0; r < ranges; ++r) {
        range_begin[r] = sum;
        for (std::size_t c = 0; c < chunks; ++c) {
          const std::uint32_t count = at[c * ranges + r];
          at[c * ranges + r] = sum;
          sum += count;
        }
      }
      range_begin[ranges] = sum;
    }  // the implied barrier: every chunk's offsets are ready
#pragma omp for schedule(static)
    for (std::size_t c = 0; c < chunks; ++c) {
      std::uint32_t* fill = at.data() + c * ranges;
      for (std::size_t i = n * c / chunks; i < n * (c + 1) / chunks; ++i) {
        sorted[fill[bucket_of(items[i]) >> shift]++] = items[i];
      }
    }
    // Each range from `sorted` back into `items` by bucket, then sorted within its buckets.
#pragma omp for schedule(dynamic, 1)
    for (std::size_t r = 0; r < ranges; ++r) {
      errors.run([&] {
        const std::size_t low = r << shift;
        const std::size_t high = std::min(bucket_count, (r + 1) << shift);
        std::fill(begin.begin() + low + 1, begin.begin() + high + 1, 0);
        for (std::uint32_t i = range_begin[r]; i < range_begin[r + 1]; ++i) {
          ++begin[bucket_of(sorted[i]) + 1];
        }
        std::uint32_t sum = range_begin[r];
        for (std::size_t b = low; b < high; ++b) {
          sum += begin[b + 1];
          begin[b + 1] = sum;
        }
        // begin[low] is the range before's to write: this range starts at range_begin[r].
        std::vector<std::uint32_t> fill(high - low);
        fill[0] = range_begin[r];
        std::copy(begin.begin() + low + 1, begin.begin() + high, fill.begin() + 1);
        for (std::uint32_t i = range_begin[r]; i < range_begin[r + 1]; ++i) {
          items[fill[bucket_of(sorted[i]) - low]++] = sorted[i];
        }
        for (std::size_t b = low; b < high; ++b) {
          const std::uint32_t first = b == low ? range_begin[r] : begin[b];
          if (begin[b + 1] - first > 1) {
            std::sort(items.begin() + first, items.begin() + begin[b + 1], less);
          }
        }
      });
    }
  }
  errors.rethrow();
  sorted.swap(items);
}

}  // namespace untangle::narrow

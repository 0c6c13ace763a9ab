// A counting sort over dense bucket keys (edges, triangles), parallel by bucket range and with
// the result of one thread: the narrow phase's gather of hits and pair records.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "../parallel_errors.hpp"

namespace untangle::narrow {

// bucket_sort takes std::sort below one item per this many buckets.
constexpr std::size_t kFewItemsPerBucket = 8;

// Sorted by (bucket, then `less` within a bucket) with a counting sort over the buckets: linear
// for keys whose first part is a dense index (an edge, a triangle) and buckets of a few items.
// Each thread sorts the items of its own range of buckets (every thread reads all items, but
// writes only its own), so no write is shared and the result is that of one thread.
// Items much fewer than buckets (a clean or nearly clean state, as in most of a bake's checks)
// are sorted by one std::sort instead: the passes over all buckets would cost more. The order is
// the same, as no two items compare equal (a hit reference is unique by its block and index, a
// pair record by its triangles: each triangle pair belongs to one leaf pair).
// `sorted` and `begin` are the caller's, kept between calls.
template <class T, class BucketOf, class Less>
void bucket_sort(const std::vector<T>& items, std::size_t bucket_count, BucketOf bucket_of,
                 Less less, std::vector<T>& sorted, std::vector<std::uint32_t>& begin) {
  if (items.size() < bucket_count / kFewItemsPerBucket) {
    sorted.assign(items.begin(), items.end());
    std::sort(sorted.begin(), sorted.end(), [&](const T& x, const T& y) {
      const std::size_t bx = bucket_of(x), by = bucket_of(y);
      return bx < by || (bx == by && less(x, y));
    });
    return;
  }
  sorted.resize(items.size());
  begin.assign(bucket_count + 1, 0);
  std::vector<std::uint32_t> range_size(static_cast<std::size_t>(omp_get_max_threads()), 0);
  ParallelErrors errors;
#pragma omp parallel
  {
    const auto threads = static_cast<std::size_t>(omp_get_num_threads());
    const auto thread = static_cast<std::size_t>(omp_get_thread_num());
    const std::size_t low = bucket_count * thread / threads;
    const std::size_t high = bucket_count * (thread + 1) / threads;
    for (const T& item : items) {
      const std::size_t b = bucket_of(item);
      if (b >= low && b < high) ++begin[b + 1];
    }
    std::uint32_t sum = 0;  // the range's own prefix sums, then shifted by the ranges before
    for (std::size_t b = low; b < high; ++b) {
      sum += begin[b + 1];
      begin[b + 1] = sum;
    }
    range_size[thread] = sum;
#pragma omp barrier
    std::uint32_t shift = 0;
    for (std::size_t r = 0; r < thread; ++r) shift += range_size[r];
    for (std::size_t b = low; b < high; ++b) begin[b + 1] += shift;
#pragma omp barrier
    errors.run([&] {  // after the last barrier: a thread that fails may leave at once
      std::vector<std::uint32_t> fill(begin.begin() + low, begin.begin() + high);
      for (const T& item : items) {
        const std::size_t b = bucket_of(item);
        if (b >= low && b < high) sorted[fill[b - low]++] = item;
      }
      for (std::size_t b = low; b < high; ++b) {
        if (begin[b + 1] - begin[b] > 1) {
          std::sort(sorted.begin() + begin[b], sorted.begin() + begin[b + 1], less);
        }
      }
    });
  }
  errors.rethrow();
}

}  // namespace untangle::narrow

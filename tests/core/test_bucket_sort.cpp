// The narrow phase's parallel counting sort (core/src/narrow_phase/bucket_sort.hpp) against
// std::sort of the same items, at several thread counts, bucket counts and densities.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "../../core/src/narrow_phase/bucket_sort.hpp"

namespace untangle {
namespace {

struct Item {
  std::uint32_t bucket, tie;  // unique pairs, as the narrow phase's items are
  bool operator==(const Item&) const = default;
};

std::vector<Item> random_items(std::size_t count, std::uint32_t bucket_count, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_int_distribution<std::uint32_t> bucket(0, bucket_count - 1);
  std::vector<Item> items(count);
  for (std::size_t i = 0; i < count; ++i) {
    items[i] = {bucket(random), static_cast<std::uint32_t>(i)};
  }
  std::shuffle(items.begin(), items.end(), random);
  return items;
}

TEST(BucketSort, EqualsStdSortForAnyThreadCountBucketCountAndDensity) {
  const int saved = omp_get_max_threads();
  const auto bucket_of = [](const Item& x) { return x.bucket; };
  const auto less = [](const Item& x, const Item& y) { return x.tie < y.tie; };
  struct Case {
    std::uint32_t buckets;
    std::size_t items;
  };
  // Dense (the counting sort), sparse (std::sort), one bucket, bucket counts not a power of two.
  for (const Case c : {Case{1, 50}, Case{5, 3}, Case{1000, 5000}, Case{1000, 90},
                       Case{100003, 200000}, Case{100003, 20000}, Case{100003, 5}}) {
    const std::vector<Item> items = random_items(c.items, c.buckets, c.buckets + 7);
    std::vector<Item> expected = items;
    std::sort(expected.begin(), expected.end(), [](const Item& x, const Item& y) {
      return x.bucket < y.bucket || (x.bucket == y.bucket && x.tie < y.tie);
    });
    for (const int threads : {1, 2, 3, 7}) {
      omp_set_num_threads(threads);
      std::vector<Item> input = items, sorted;
      std::vector<std::uint32_t> begin;
      narrow::bucket_sort(input, c.buckets, bucket_of, less, sorted, begin);
      EXPECT_EQ(sorted, expected) << c.buckets << " buckets, " << c.items << " items, " << threads
                                  << " threads";
    }
  }
  omp_set_num_threads(saved);
}

TEST(BucketSort, NoItems) {
  std::vector<Item> input, sorted = {{1, 2}};
  std::vector<std::uint32_t> begin;
  narrow::bucket_sort(
      input, 10, [](const Item& x) { return x.bucket; },
      [](const Item& x, const Item& y) { return x.tie < y.tie; }, sorted, begin);
  EXPECT_TRUE(sorted.empty());
}

}  // namespace
}  // namespace untangle

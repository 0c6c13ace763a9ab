// What the proximity search's source files (the search, leaf parts, neighbour masks, tree walk,
// reuse between searches, leaf tests) share.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "untangle/proximity.hpp"

namespace untangle::proximity_detail {

// The top of the trees is unrolled into about kTargetTasks tasks for the threads; with fewer than
// kParallelTasks (tiny meshes) the walk runs on one thread, and with fewer than
// kParallelLeafPairs leaf pairs so do their tests.
inline constexpr std::size_t kParallelTasks = 16;
inline constexpr std::size_t kTargetTasks = 256;
inline constexpr std::size_t kParallelLeafPairs = 256;
inline constexpr std::ptrdiff_t kParallelLeaves = 1024;

// Kdop18f::overlaps with an early exit after the first four axes (x, y, z, x+y): most volumes
// the search tests are apart there already, and the rest of the volume is not even loaded.
inline bool meet(const Kdop18f& a, const Kdop18f& b) {
#if defined(__SSE2__)
  const __m128 apart = _mm_or_ps(_mm_cmpgt_ps(_mm_load_ps(&a.min[0]), _mm_load_ps(&b.max[0])),
                                 _mm_cmpgt_ps(_mm_load_ps(&b.min[0]), _mm_load_ps(&a.max[0])));
  if (_mm_movemask_ps(apart) != 0) return false;
#endif
  return a.overlaps(b);
}

template <typename T>
void sort_unique(std::vector<T>& items) {
  std::sort(items.begin(), items.end());
  items.erase(std::unique(items.begin(), items.end()), items.end());
}

// Each vertex and each edge is owned by one leaf (that of its first triangle) and tested only from
// there: a close pair still meets, since the owner's volume holds the vertex or edge, and every
// pair is tested once instead of up to four times.
std::vector<ProximitySearch::LeafParts> find_leaf_parts(const ClothMesh& mesh);

}  // namespace untangle::proximity_detail

// Colouring: constraints grouped so that no two in a group share a particle, which lets the
// XPBD solver project one group in parallel with Gauss-Seidel results (Fratarcangeli 2016).
// Greedy in constraint order, so the colours are the same on every run and thread count.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>

#include "untangle/types.hpp"

namespace untangle {

struct Colouring {
  std::vector<Index> order;    // constraint indices grouped by colour, ascending inside a colour
  std::vector<Index> offsets;  // colour c holds order[offsets[c] .. offsets[c + 1])
  std::size_t colour_count() const { return offsets.empty() ? 0 : offsets.size() - 1; }
};

// Each constraint gets the smallest colour none of its particles has yet. Particles equal to
// kNoIndex are ignored (unused slots of shorter constraints).
template <std::size_t K>
Colouring colour_constraints(const std::vector<std::array<Index, K>>& constraints,
                             std::size_t particle_count) {
  std::vector<Index> colour(constraints.size(), kNoIndex);
  std::vector<Index> pending(constraints.size());
  for (std::size_t c = 0; c < constraints.size(); ++c) pending[c] = static_cast<Index>(c);
  // 64 colours per round with one bit mask per particle; what does not fit waits for the next.
  std::vector<std::uint64_t> used(particle_count);
  Index base = 0;
  Index colours = 0;
  while (!pending.empty()) {
    std::fill(used.begin(), used.end(), 0);
    std::vector<Index> next;
    for (Index c : pending) {
      std::uint64_t taken = 0;
      for (Index p : constraints[c]) {
        if (p != kNoIndex) taken |= used[p];
      }
      if (taken == ~std::uint64_t{0}) {
        next.push_back(c);
        continue;
      }
      const int bit = std::countr_one(taken);
      for (Index p : constraints[c]) {
        if (p != kNoIndex) used[p] |= std::uint64_t{1} << bit;
      }
      colour[c] = base + static_cast<Index>(bit);
      colours = std::max(colours, colour[c] + 1);
    }
    pending.swap(next);
    base += 64;
  }
  Colouring result;
  result.offsets.assign(colours + 1, 0);
  for (Index c : colour) ++result.offsets[c + 1];
  for (Index k = 0; k < colours; ++k) result.offsets[k + 1] += result.offsets[k];
  result.order.resize(constraints.size());
  std::vector<Index> fill(result.offsets.begin(), result.offsets.end() - 1);
  for (std::size_t c = 0; c < constraints.size(); ++c) {
    result.order[fill[colour[c]]++] = static_cast<Index>(c);
  }
  return result;
}

}  // namespace untangle

#include "untangle/general_position.hpp"

#include <cstdint>

namespace untangle {
namespace {

// SplitMix64 (Steele, Lea & Flood 2014): a well-mixed 64-bit hash of a counter.
std::uint64_t split_mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// A component in [-1, 1) from 53 bits of the hash.
double unit_component(std::uint64_t bits) {
  return static_cast<double>(bits >> 11) * 0x1.0p-52 - 1.0;
}

}  // namespace

std::size_t nudge_edge_ends(const ClothMesh& mesh, std::span<const Index> edges,
                            const std::vector<double>& inverse_mass, double distance, int round,
                            Positions& x) {
  std::vector<std::uint8_t> moved(x.size(), 0);
  std::size_t count = 0;
  for (Index e : edges) {
    for (Index v : mesh.edges[e].vertices) {
      if (moved[v] || inverse_mass[v] <= 0) continue;
      moved[v] = 1;
      ++count;
      // A direction of its own per vertex, like the index-based perturbation of simulation of
      // simplicity. Tried instead: mostly along the vertex normal, so that the ends along one
      // exact crossing leave it to one side; no better (docs/untangler.md).
      const std::uint64_t h = split_mix((static_cast<std::uint64_t>(v) << 8) | (round & 0xff));
      const Vec3 d(unit_component(h), unit_component(split_mix(h)),
                   unit_component(split_mix(h + 1)));
      const double length = d.norm();  // sqrt is exact: the same bits on every CPU
      x[v] += length > 1e-3 ? Vec3((distance / length) * d) : Vec3(distance, 0, 0);
    }
  }
  return count;
}

}  // namespace untangle

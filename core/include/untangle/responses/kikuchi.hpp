// Kikuchi & Kanai 2025 ("A Unified Discrete Collision Framework for Triangle Primitives"): per
// intersecting triangle pair, the penetration depth of each triangle into the other is the deepest
// corner of their projected overlap; the pair is pushed apart by the smaller depth along the normal
// it was measured against, as a PBD projection in which each triangle moves as a whole.
#pragma once

#include <array>
#include <cstdint>
#include <unordered_map>

#include "untangle/response.hpp"

namespace untangle {

// The side one triangle must keep relative to the other's plane: +1 along its normal, -1 behind.
struct PairSides {
  // [0]: side of the second triangle relative to the first's normal; [1]: of the first relative
  // to the second's. 0 = not known.
  std::array<std::int8_t, 2> side{0, 0};
  int frames_apart = 0;  // frames since the pair was last close or intersecting
};

// The depth of `other` into `base`: the largest distance to base's plane, on the wrong side of
// `side` (+1: other belongs in front of base's normal), over the corners of other clipped to the
// prism above base (its own vertices over base, base's corners under it, edge crossings).
// 0 when other does not lie over base or is entirely on the valid side.
double penetration_depth(const std::array<Vec3, 3>& base, const std::array<Vec3, 3>& other,
                         int side);

class KikuchiResponse final : public Response {
 public:
  // The paper has no valid side inside one cloth. A crossing pair takes its remembered side,
  // else the side it had at the start of the frame (a crossing within one frame), else it
  // assumes its back faces touch (each triangle behind the other's normal): another tangle may
  // then be pushed the wrong way, deeper into the crossing.
  static constexpr std::int8_t kDefaultSide = -1;
  // A remembered side is forgotten once the pair has been apart (neither close nor crossing)
  // this many frames.
  static constexpr int kForgetFrames = 10;

  Displacement compute(const ResponseInput& input) override;

  // The remembered sides, keyed by (first triangle << 32 | second triangle), first < second.
  const std::unordered_map<std::uint64_t, PairSides>& memory() const { return memory_; }
  static std::uint64_t pair_key(Index a, Index b);

 private:
  struct Sides {
    std::array<std::int8_t, 2> known{0, 0};  // as PairSides::side; 0 = no history
    std::array<std::int8_t, 2> used{kDefaultSide, kDefaultSide};
    bool from_start = false;  // known from the start of this frame, not yet remembered
  };
  // The sides of a crossing pair: remembered, else as they were at the start of the frame,
  // else kDefaultSide.
  Sides sides_of(const ResponseInput& input, Index a, Index b) const;

  // Ages the memory and records the sides of close pairs that do not cross (from the BVH's
  // candidate leaf pairs, inflated by the thickness).
  void remember_sides(const ResponseInput& input);

  std::unordered_map<std::uint64_t, PairSides> memory_;
};

}  // namespace untangle

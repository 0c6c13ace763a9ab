// Untangling a sequence (a cache, frame by frame): every frame comes out clean and smooth with the
// correction carried from frame to frame, and no frame ends beyond the strain limit of its own
// input, also where the carried correction does not fit.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "untangle/untangler.hpp"

#include "support/untangler_cases.hpp"

namespace untangle {
namespace {

using namespace test::untangler;

// The start of the frame after one untangled from `input` to `output`: that correction carried
// onto the next input frame, as untangle_sequence starts it.
Positions carried_onto(const Positions& next, const Positions& input, const Positions& output) {
  Positions x = next;
  for (std::size_t v = 0; v < x.size(); ++v) x[v] += output[v] - input[v];
  return x;
}

TEST(UntangleSequence, EveryFrameCleanSmoothAndTheCorrectionIsCarried) {
  // The ridge slides along x by 0.02 per frame: a tangle that persists through the sequence.
  const Case c({folded_ridge()});
  std::vector<Positions> frames;
  for (int f = 0; f < 6; ++f) {
    frames.push_back(ClothMesh::build(std::vector{folded_ridge(0.65 + 0.02 * f)}).rest_positions);
  }
  std::vector<Positions> carried, independent;
  const SequenceReport with = untangle_sequence(c.mesh, frames, default_options(), false, carried);
  const SequenceReport without =
      untangle_sequence(c.mesh, frames, default_options(), true, independent);
  ASSERT_EQ(carried.size(), frames.size());
  int carried_iterations = 0, independent_iterations = 0;
  for (std::size_t f = 0; f < frames.size(); ++f) {
    EXPECT_GT(with.frames[f].pairs_before, 0u);
    EXPECT_EQ(brute_force_pairs(c.mesh, carried[f]), 0u) << f;
    EXPECT_LE(strain_against(c.mesh, frames[f], carried[f]), 0.05) << f;
    carried_iterations += with.frames[f].iterations;
    independent_iterations += without.frames[f].iterations;
  }
  // The largest per-vertex jump between consecutive frames, out against in.
  double jump_in = 0, jump_out = 0;
  for (std::size_t f = 1; f < frames.size(); ++f) {
    for (std::size_t v = 0; v < frames[f].size(); ++v) {
      jump_in = std::max(jump_in, (frames[f][v] - frames[f - 1][v]).norm());
      jump_out = std::max(jump_out, (carried[f][v] - carried[f - 1][v]).norm());
    }
  }
  EXPECT_LE(jump_out, 1.5 * jump_in);
  EXPECT_LT(carried_iterations, independent_iterations);
}

// Every output frame of a sequence is within the strain limit of its own input frame, also where
// the correction carried from the frame before does not fit. Frame 1 is frame 0 shrunk to a fifth
// about its centre (as tangled as frame 0; optionally mirrored in z, so the correction points the
// wrong way): frame 0's correction, carried onto it, stretches it about five times as much.
TEST(UntangleSequence, ACarriedCorrectionThatDoesNotFitLeavesNoFrameBeyondTheStrainLimit) {
  const Case c({folded_ridge()});
  for (const bool mirrored : {false, true}) {
    for (const int iterations : {1, 300}) {
      Positions shrunk = c.input;
      Vec3 centre = Vec3::Zero();
      for (const Vec3& x : shrunk) centre += x / static_cast<double>(shrunk.size());
      for (Vec3& x : shrunk) {
        x = centre + 0.2 * (x - centre);
        if (mirrored) x.z() = 2 * centre.z() - x.z();
      }
      const std::vector<Positions> frames{c.input, shrunk};
      UntangleOptions options = default_options();
      options.max_iterations = iterations;
      std::vector<Positions> output;
      const SequenceReport report = untangle_sequence(c.mesh, frames, options, false, output);
      ASSERT_EQ(output.size(), 2u);
      const Positions carried_start = carried_onto(shrunk, c.input, output[0]);
      const std::string label = (mirrored ? "mirrored, " : "") + std::to_string(iterations);
      ASSERT_GT(strain_against(c.mesh, shrunk, carried_start), 2 * options.strain_limit) << label;
      for (std::size_t f = 0; f < 2; ++f) {
        EXPECT_LE(strain_against(c.mesh, frames[f], output[f]), options.strain_limit + 1e-3)
            << label << ", frame " << f << ", pairs " << report.frames[f].pairs_after;
      }
    }
  }
}

// Frame 1 is frame 0 shrunk to 0.7 in x and y: the correction of frame 0 carried onto it still
// crosses nothing, but it stretches the shrunk edges far beyond the limit. The frame goes through
// the solver, which holds the limit, rather than being only relaxed from the start.
TEST(UntangleSequence, ACleanCarriedStartBeyondTheStrainLimitIsSolvedWithinIt) {
  const Case c(tilted_sheet_through_flat_one());
  Positions shrunk = c.input;
  for (Vec3& x : shrunk) {
    x.x() *= 0.7;
    x.y() *= 0.7;
  }
  const std::vector<Positions> frames{c.input, shrunk};
  // Also without relaxation: the limit is the solver's, not something relaxation may reach.
  for (const int relax_iterations : {30, 0}) {
    UntangleOptions options = default_options();
    options.relax_iterations = relax_iterations;
    std::vector<Positions> output;
    const SequenceReport report = untangle_sequence(c.mesh, frames, options, false, output);
    ASSERT_EQ(output.size(), 2u);
    const Positions carried_start = carried_onto(shrunk, c.input, output[0]);
    ASSERT_EQ(brute_force_pairs(c.mesh, carried_start), 0u);
    ASSERT_GT(strain_against(c.mesh, shrunk, carried_start), 2 * options.strain_limit);
    for (std::size_t f = 0; f < 2; ++f) {
      const std::string label =
          "relax " + std::to_string(relax_iterations) + ", frame " + std::to_string(f);
      EXPECT_EQ(brute_force_pairs(c.mesh, output[f]), 0u) << label;
      EXPECT_EQ(report.frames[f].pairs_after, 0u) << label;
      EXPECT_LE(strain_against(c.mesh, frames[f], output[f]), options.strain_limit + 1e-3) << label;
    }
  }
}

// A frame is pulled toward its carried start, not toward its input: a correction the frame before
// made stays where nothing new crosses. Three sheets: the tilted one through the flat one in both
// frames (untangled in frame 0, its correction carried into frame 1, where it is clean), and a
// small sheet in the flat one's far corner, above it in frame 0 and with its lower edge through
// it in frame 1. While frame 1 untangles that corner, the tilted sheet keeps frame 0's output;
// pulled toward the input, it was drawn back toward the flat sheet it had been pushed out of.
TEST(UntangleSequence, AFrameIsPulledTowardItsCarriedStart) {
  std::vector<PolygonMesh> pieces = tilted_sheet_through_flat_one();
  auto corner_sheet = [](double lift) {
    return quad_grid(6, 6, [=](Index i, Index j) {
      const double x = 0.553 + 0.08 * i, y = -0.947 + 0.08 * j;
      return Vec3(x, y, lift + 0.5 * (x - 0.553) - 0.06);
    });
  };
  pieces.push_back(corner_sheet(0.5));
  const Case c(pieces);
  pieces.back() = corner_sheet(-0.02);
  const std::vector<Positions> frames{c.input, ClothMesh::build(pieces).rest_positions};
  // Without relaxation, which evens out the strain without a pull and moves what it relaxes.
  UntangleOptions options = default_options();
  options.relax_iterations = 0;
  std::vector<Positions> output;
  const SequenceReport report = untangle_sequence(c.mesh, frames, options, false, output);
  ASSERT_EQ(output.size(), 2u);
  const Positions carried_start = carried_onto(frames[1], frames[0], output[0]);
  // The premise: frame 0 moved the tilted sheet, and frame 1 starts tangled (in the corner).
  ASSERT_GT(brute_force_pairs(c.mesh, frames[0]), 0u);
  ASSERT_GT(brute_force_pairs(c.mesh, carried_start), 0u);
  ASSERT_GT(report.frames[1].iterations, 2);
  // Mean distances over the tilted sheet: the stretch moves a few of its vertices (frame 0 left
  // it strained), a pull toward the input all of them.
  const Index tilted = 1;
  const Index begin = c.mesh.piece_vertex_begin[tilted],
              end = c.mesh.piece_vertex_begin[tilted + 1];
  double correction = 0, moved = 0;
  for (Index v = begin; v < end; ++v) {
    correction += (output[0][v] - frames[0][v]).norm() / static_cast<double>(end - begin);
    moved += (output[1][v] - output[0][v]).norm() / static_cast<double>(end - begin);
  }
  ASSERT_GT(correction, 0.01);
  for (std::size_t f = 0; f < 2; ++f) {
    EXPECT_EQ(brute_force_pairs(c.mesh, output[f]), 0u) << f;
    EXPECT_LE(strain_against(c.mesh, frames[f], output[f]), 0.05) << f;
  }
  // Measured: 0.09 of the correction with the pull toward the start, 0.28 toward the input.
  EXPECT_LT(moved, 0.15 * correction) << "correction " << correction << ", moved " << moved
                                      << ", frame 1 iterations " << report.frames[1].iterations;
}

// A frame of a sequence starts at half the push its predecessor ended at (never below the gentle
// start), so a tangle that needed a strong push in one frame does not climb to it again from the
// gentle start in the next; independent frames, and every frame without carry_push, start
// gentle. The tilted sheet, mirrored in z in frame 1 (the carried correction points the wrong
// way) and back in frame 2, with a very gentle start that has to double several times.
TEST(UntangleSequence, AFrameStartsAtHalfThePushItsPredecessorEndedAt) {
  const Case c(tilted_sheet_through_flat_one());
  Positions mirrored = c.input;
  Vec3 centre = Vec3::Zero();
  for (const Vec3& x : mirrored) centre += x / static_cast<double>(mirrored.size());
  for (Vec3& x : mirrored) x.z() = 2 * centre.z() - x.z();
  const std::vector<Positions> frames{c.input, mirrored, c.input};
  for (const bool carry : {true, false}) {
    for (const bool independent : {false, true}) {
      UntangleOptions options = default_options();
      options.carry_push = carry;
      options.sequence_strength_scale = 0.01;
      options.stall_iterations = 2;
      std::vector<Positions> output;
      const SequenceReport report = untangle_sequence(c.mesh, frames, options, independent, output);
      ASSERT_EQ(output.size(), frames.size());
      bool started_stronger = false;
      for (std::size_t f = 0; f < frames.size(); ++f) {
        const std::string label = std::string(carry ? "carry" : "no carry") +
                                  (independent ? ", independent" : "") + ", frame " +
                                  std::to_string(f);
        const UntangleReport& frame = report.frames[f];
        EXPECT_EQ(brute_force_pairs(c.mesh, output[f]), 0u) << label;
        EXPECT_LE(strain_against(c.mesh, frames[f], output[f]), 0.05) << label;
        const double expected = f > 0 && carry && !independent
                                    ? std::max(0.01, 0.5 * report.frames[f - 1].end_push)
                                    : 0.01;
        EXPECT_DOUBLE_EQ(frame.start_push, expected) << label;
        started_stronger = started_stronger || frame.start_push > 0.01;
      }
      // The premise: some frame ended strong enough for its successor to start above gentle.
      EXPECT_EQ(started_stronger, carry && !independent);
    }
  }
}

}  // namespace
}  // namespace untangle

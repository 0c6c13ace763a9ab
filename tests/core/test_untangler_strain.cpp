// Untangler, strain: the strain limit bounds the output's polygon edges (measured here), and the
// relaxation after the first clean state lowers the strain, stays clean, stays within
// max_iterations and stops once its frames no longer lower the strain.
#include <gtest/gtest.h>

#include <algorithm>

#include "untangle/untangler.hpp"

#include "support/untangler_cases.hpp"

namespace untangle {
namespace {

using namespace test::untangler;

// The strain limit bounds the output by construction: at 0.2 % the ridge is still cleared, every
// polygon edge within the limit (measured here); without the limit the same solve stretches
// them further.
TEST(Untangler, StrainLimitBoundsTheOutputStrain) {
  const Case c({folded_ridge()});
  for (const double limit : {0.0, 0.002}) {
    UntangleOptions options = default_options();
    options.strain_limit = limit;
    Positions output;
    const UntangleReport report = untangle(c.mesh, c.input, nullptr, options, output);
    SCOPED_TRACE(limit);
    EXPECT_EQ(brute_force_pairs(c.mesh, output), 0u);
    EXPECT_EQ(report.pairs_after, 0u);
    const double strain = strain_against(c.mesh, c.input, output);
    if (limit > 0) {
      EXPECT_LE(strain, limit + 1e-4);
    } else {
      EXPECT_GT(strain, 0.0021);
    }
  }
}

// The relaxation starts from the first clean state (what a solve with relax_iterations = 0
// returns) and keeps only clean states: the output is clean by the all-pairs test and less
// strained than that first clean state.
TEST(Untangler, RelaxationLowersTheStrainOfTheFirstCleanStateAndStaysClean) {
  for (const Case& c : {Case(tilted_sheet_through_flat_one()), Case({folded_ridge()})}) {
    UntangleOptions first_clean = default_options();
    first_clean.relax_iterations = 0;
    Positions unrelaxed, relaxed;
    untangle(c.mesh, c.input, nullptr, first_clean, unrelaxed);
    const UntangleReport report = untangle(c.mesh, c.input, nullptr, default_options(), relaxed);
    ASSERT_EQ(brute_force_pairs(c.mesh, unrelaxed), 0u);
    EXPECT_EQ(brute_force_pairs(c.mesh, relaxed), 0u);
    EXPECT_EQ(report.pairs_after, 0u);
    EXPECT_LT(strain_against(c.mesh, c.input, relaxed), strain_against(c.mesh, c.input, unrelaxed));
  }
}

// Relaxation frames count as iterations: however early the state gets clean, the report never
// shows more than max_iterations frames (the fuzzer found 1 + 30 relaxation frames under a
// limit of 1 to 4).
TEST(Untangler, RelaxationStaysWithinMaxIterations) {
  for (const Case& c : {Case(tilted_sheet_through_flat_one()), Case({folded_ridge()})}) {
    UntangleOptions options = default_options();
    options.relax_strain = 0;  // relaxes for all of relax_iterations unless a frame fails
    Positions out;
    const UntangleReport unlimited = untangle(c.mesh, c.input, nullptr, options, out);
    ASSERT_EQ(unlimited.pairs_after, 0u);
    // Limits that end inside the relaxation (at most relax_iterations frames long).
    for (int back : {1, 5, 15, 29}) {
      const int limit = std::max(1, unlimited.iterations - back);
      options.max_iterations = limit;
      const UntangleReport report = untangle(c.mesh, c.input, nullptr, options, out);
      EXPECT_LE(report.iterations, limit);
    }
  }
}

// Relaxation ends once two frames in a row have not lowered the strain: here the strain limit
// holds the first clean state at its strain, and the relaxation, free to run 30 frames, stops
// long before (its frames are the iterations beyond those of a solve without it).
TEST(Untangler, RelaxationStopsWhenItsFramesNoLongerLowerTheStrain) {
  const Case c({folded_ridge()});
  UntangleOptions options = default_options();
  options.strain_limit = 0.002;
  options.relax_strain = 0;
  options.relax_iterations = 0;
  Positions out;
  const UntangleReport unrelaxed = untangle(c.mesh, c.input, nullptr, options, out);
  options.relax_iterations = 30;
  const UntangleReport relaxed = untangle(c.mesh, c.input, nullptr, options, out);
  ASSERT_EQ(relaxed.pairs_after, 0u);
  EXPECT_LE(relaxed.iterations - unrelaxed.iterations, 10);
}

}  // namespace
}  // namespace untangle

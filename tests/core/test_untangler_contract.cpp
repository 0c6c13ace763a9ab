// Untangler, its contract as a call: pinned particles stay bit-identical, a clean input comes
// back unchanged, progress can cancel, one and two threads give the same output, and bad input
// is refused with the output left alone.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "untangle/untangler.hpp"

#include "support/untangler_cases.hpp"

namespace untangle {
namespace {

using namespace test::untangler;

TEST(Untangler, PinnedParticlesNeverMove) {
  // The front half's first two rows pinned: they are bit-identical in the output.
  const Case c({folded_ridge()});
  UntangleOptions options = default_options();
  options.inverse_mass.assign(c.mesh.vertex_count(), 1.0);
  for (Index v = 0; v < 32; ++v) options.inverse_mass[v] = 0;
  Positions output;
  const UntangleReport report = untangle(c.mesh, c.input, nullptr, options, output);
  EXPECT_EQ(report.pairs_after, 0u);
  for (Index v = 0; v < 32; ++v) EXPECT_EQ(output[v], c.input[v]) << v;
}

TEST(Untangler, CleanInputComesBackUnchanged) {
  // The ridge rises to 0.02 below the front half: nothing to do.
  const Case c({folded_ridge(0.75, 0.02)});
  const Positions clean = c.input;
  ASSERT_EQ(brute_force_pairs(c.mesh, clean), 0u);
  Positions output;
  const UntangleReport report = untangle(c.mesh, clean, nullptr, default_options(), output);
  EXPECT_EQ(report.iterations, 0);
  EXPECT_EQ(output, clean);
}

TEST(Untangler, ProgressCanCancel) {
  const Case c({folded_ridge()});
  std::vector<int> seen;
  Positions output;
  const UntangleReport report = untangle(c.mesh, c.input, nullptr, default_options(), output,
                                         [&](int iteration, int, std::size_t) {
                                           seen.push_back(iteration);
                                           return iteration < 2;
                                         });
  EXPECT_TRUE(report.cancelled);
  EXPECT_EQ(report.iterations, 2);
  EXPECT_EQ(seen, (std::vector<int>{1, 2}));
  EXPECT_EQ(report.pairs_after, brute_force_pairs(c.mesh, output));
}

TEST(Untangler, SameOutputForOneAndTwoThreads) {
  const Case c({folded_ridge()});
  std::vector<Positions> outputs(2);
  for (int threads : {1, 2}) {
    UntangleOptions options = default_options();
    options.settings.threads = threads;
    untangle(c.mesh, c.input, nullptr, options, outputs[threads - 1]);
  }
  EXPECT_EQ(outputs[0], outputs[1]);
}

TEST(Untangler, BadInputIsRefusedAndOutputLeftAlone) {
  const Case c({folded_ridge()});
  Positions output{Vec3(1, 2, 3)};
  Positions short_input(c.input.begin(), c.input.end() - 1);
  EXPECT_THROW(untangle(c.mesh, short_input, nullptr, default_options(), output),
               std::invalid_argument);
  Positions nan_input = c.input;
  nan_input[7].x() = std::nan("");
  EXPECT_THROW(untangle(c.mesh, nan_input, nullptr, default_options(), output),
               std::invalid_argument);
  EXPECT_EQ(output, (Positions{Vec3(1, 2, 3)}));
}

}  // namespace
}  // namespace untangle

// Untangler, one state: hand-built tangles (a folded sheet whose back half bulges through the
// front, a sheet corner poking through another, a tilted sheet through a flat one) end free of
// intersections by an independent all-pairs test, with the edge lengths of the input kept within
// 5 %; a single state starts at the strongest push, an unfinished solve returns its best state,
// a stall goes on with Ye's rule and eases the pull and the bending (a pleat cut out of a
// Blender-made bake, tests/core/data), and a crossing along mesh vertices is seen.
// Interface contract: test_untangler_contract.cpp; strain limit and relaxation:
// test_untangler_strain.cpp; quad splits and flattening: test_untangler_quads.cpp; sequences:
// test_untangle_sequence.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "untangle/detection.hpp"
#include "untangle/io/obj.hpp"
#include "untangle/untangler.hpp"

#include "support/untangler_cases.hpp"

namespace untangle {
namespace {

using namespace test::untangler;

TEST(Untangler, FoldedSheetWithRidgeThroughItReachesZero) {
  const Case c({folded_ridge()});
  const Positions before = c.input;
  Positions output;
  const UntangleReport report = untangle(c.mesh, c.input, nullptr, default_options(), output);
  expect_resolved(c, report, output);
  EXPECT_EQ(c.input, before);
  double max_move = 0;
  for (std::size_t v = 0; v < output.size(); ++v) {
    max_move = std::max(max_move, (output[v] - c.input[v]).norm());
  }
  EXPECT_NEAR(report.max_displacement, max_move, 1e-12);
}

TEST(Untangler, CornerPokingThroughAnotherSheetReachesZero) {
  const Case c(corner_through_sheet());
  Positions output;
  const UntangleReport report = untangle(c.mesh, c.input, nullptr, default_options(), output);
  expect_resolved(c, report, output);
}

// A deep open contour made the untangler stall for some thicknesses and not others (ending with
// more pairs than it started with): with the stall ladder (stronger push, then Ye's rule for
// the flap) it must clear it whatever the thickness, within 5 % strain.
TEST(Untangler, TiltedSheetThroughAFlatOneReachesZeroForEveryThickness) {
  const Case c(tilted_sheet_through_flat_one());
  for (double thickness : {0.0098, 0.0099, 0.01, 0.0101, 0.0102}) {
    UntangleOptions options = default_options();
    options.settings.thickness = thickness;
    Positions output;
    const UntangleReport report = untangle(c.mesh, c.input, nullptr, options, output);
    SCOPED_TRACE(thickness);
    expect_resolved(c, report, output);
  }
}

// A single state has no neighbouring frame to match, so its solve starts at the strongest push
// (a sequence's frames start gentle; UntangleSequence tests their smoothness): it gets clean in
// fewer frames than the gentle start, within the same 5 % strain.
TEST(Untangler, ASingleStateStartsAtTheStrongestPush) {
  for (const Case& c : {Case({folded_ridge()}), Case(corner_through_sheet()),
                        Case(tilted_sheet_through_flat_one())}) {
    UntangleOptions gentle = default_options();
    gentle.strength_scale = gentle.sequence_strength_scale;
    Positions strong_out, gentle_out;
    const UntangleReport strong = untangle(c.mesh, c.input, nullptr, default_options(), strong_out);
    const UntangleReport slow = untangle(c.mesh, c.input, nullptr, gentle, gentle_out);
    expect_resolved(c, strong, strong_out);
    ASSERT_EQ(slow.pairs_after, 0u);
    EXPECT_GT(strong.iterations_to_clean, 0);
    EXPECT_LE(strong.iterations_to_clean, strong.iterations);
    EXPECT_LT(strong.iterations_to_clean, slow.iterations_to_clean);
  }
}

// A solve that does not get clean returns the state with the fewest intersections it reached
// (each state's count is reported through progress), not merely the last one.
TEST(Untangler, AnUnfinishedSolveReturnsItsStateOfFewestPairs) {
  const Case c(tilted_sheet_through_flat_one());
  for (int limit : {3, 4, 5, 6, 8}) {
    UntangleOptions options = default_options();
    options.max_iterations = limit;
    std::size_t fewest = brute_force_pairs(c.mesh, c.input);
    Positions output;
    const UntangleReport report =
        untangle(c.mesh, c.input, nullptr, options, output, [&](int, int, std::size_t pairs) {
          fewest = std::min(fewest, pairs);
          return true;
        });
    SCOPED_TRACE(limit);
    EXPECT_EQ(report.pairs_after, brute_force_pairs(c.mesh, output));
    EXPECT_LE(report.pairs_after, fewest);
  }
}

// A push too weak to move anything stalls: ICM then goes on with Ye's rule (once), and not
// when the fallback is off or the method is not ICM.
TEST(Untangler, StalledIcmGoesOnWithYeOnlyWhenAllowed) {
  const Case c(tilted_sheet_through_flat_one());
  UntangleOptions options = default_options();
  options.settings.response_strength = 1e-9;
  options.max_strength_scale = options.strength_scale;
  options.stall_iterations = 4;
  options.max_iterations = 20;
  Positions output;
  EXPECT_EQ(untangle(c.mesh, c.input, nullptr, options, output).method_switches, 1);
  options.fall_back_to_ye = false;
  EXPECT_EQ(untangle(c.mesh, c.input, nullptr, options, output).method_switches, 0);
  options.fall_back_to_ye = true;
  options.settings.method = Method::kKikuchi;
  EXPECT_EQ(untangle(c.mesh, c.input, nullptr, options, output).method_switches, 0);
}

// A pull that takes the whole way back to the input in every frame holds the tangle where it is
// however strong the push: only easing the pull on a stall lets the push win.
TEST(Untangler, AStallEasesThePullTowardTheInput) {
  const Case c(corner_through_sheet());
  UntangleOptions options = default_options();
  options.pull_stiffness = 1.0;
  options.stall_iterations = 4;
  options.max_iterations = 120;
  options.ease_pull_on_stall = false;
  Positions held;
  const UntangleReport stuck = untangle(c.mesh, c.input, nullptr, options, held);
  EXPECT_GT(stuck.pairs_after, 0u);
  EXPECT_GT(brute_force_pairs(c.mesh, held), 0u);
  options.ease_pull_on_stall = true;
  Positions output;
  const UntangleReport report = untangle(c.mesh, c.input, nullptr, options, output);
  expect_resolved(c, report, output);
}
// A pleat one polygon wide folded through itself: two triangles one strip apart cross, the strip
// between them turned over. The patch (20 x 20 vertices) is cut out of a state where the
// triangulated sphere bake stayed at this one pair (docs/untangler.md, "Stalls also ease the
// bending"), with its input frame as the rest shape. The bending keeps the input's fold, so
// only easing it on a stall lets the pushes turn the strip back.
TEST(Untangler, AStallEasesTheBendingThatHoldsAPleat) {
  const std::string data = UNTANGLE_TEST_DATA;
  const ClothMesh mesh = ClothMesh::build(split_pieces(read_obj(data + "/pleat_state.obj")).meshes);
  const Positions rest =
      ClothMesh::build(split_pieces(read_obj(data + "/pleat_rest.obj")).meshes).rest_positions;
  const Positions& input = mesh.rest_positions;
  ASSERT_EQ(brute_force_pairs(mesh, input), 1u);
  UntangleOptions options = default_options();
  options.pull_stiffness = 0;  // in the bake the stalls had eased it to nothing
  options.max_iterations = 20;
  Positions output;
  const UntangleReport eased = untangle(mesh, input, &rest, options, output);
  EXPECT_EQ(eased.pairs_before, 1u);
  EXPECT_EQ(eased.pairs_after, 0u);
  EXPECT_EQ(brute_force_pairs(mesh, output), 0u);
  options.ease_bending_on_stall = false;
  Positions held;
  const UntangleReport stuck = untangle(mesh, input, &rest, options, held);
  EXPECT_GT(stuck.pairs_after, 0u);
  EXPECT_GT(brute_force_pairs(mesh, held), 0u);
}

// A vertical sheet through a flat one exactly along a row of its vertices: every hit goes
// through a vertex or an edge (the narrow phase drops them all) and the edges in the crossing
// line lie in the flat sheet's plane, so without general position the untangler saw nothing and
// returned the tangle as clean. Nudged off the exact crossing it is found and undone: the output
// is clean by the independent all-pairs test, also after a random jitter of 1e-6 of the spacing
// (clean robustly, not by landing on another exact touch).
TEST(Untangler, ACrossingAlongMeshVerticesIsSeenAndUndone) {
  const PolygonMesh flat =
      quad_grid(11, 11, [](Index i, Index j) { return Vec3(0.1 * i, 0.1 * j, 0); });
  const PolygonMesh upright =
      quad_grid(5, 5, [](Index i, Index j) { return Vec3(0.3 + 0.1 * i, 0.5, -0.2 + 0.1 * j); });
  const Case c({flat, upright});
  Detection exact(c.mesh, c.input);
  exact.run(c.input);
  ASSERT_TRUE(exact.intersections().pairs.empty());
  ASSERT_GT(exact.intersections().dropped_hits, 0u);
  Positions output;
  const UntangleReport report = untangle(c.mesh, c.input, nullptr, default_options(), output);
  EXPECT_GT(report.pairs_before, 0u);
  EXPECT_EQ(report.pairs_after, 0u);
  EXPECT_EQ(brute_force_pairs(c.mesh, output), 0u);
  Detection after(c.mesh, output);
  after.run(output);
  EXPECT_EQ(after.intersections().dropped_hits, 0u);
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> jitter(-1e-7, 1e-7);
  Positions jittered = output;
  for (Vec3& p : jittered) p += Vec3(jitter(rng), jitter(rng), jitter(rng));
  EXPECT_EQ(brute_force_pairs(c.mesh, jittered), 0u);
  EXPECT_LE(strain_against(c.mesh, c.input, output), 0.05);
}

}  // namespace
}  // namespace untangle

// Untangler, quads: a polygon split into two triangles may be split along its other diagonal
// (as Blender's BVH may), so the output must be clean for both splits and a start crossed only
// in the other split is worked on from the first frame; the quads of crossings are made flatter
// (a fifth of their bend per solver iteration).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <vector>

#include "untangle/detection.hpp"
#include "untangle/solver.hpp"
#include "untangle/untangler.hpp"

#include "support/untangler_cases.hpp"

namespace untangle {
namespace {

using namespace test::untangler;

// The pieces with every polygon's corners turned by one: the library splits polygons as fans
// from their first corner, so a quad is then split along its other diagonal.
std::vector<PolygonMesh> other_diagonals(std::vector<PolygonMesh> pieces) {
  for (PolygonMesh& piece : pieces) {
    std::size_t first = 0;
    for (Index size : piece.face_sizes) {
      auto corners = piece.face_indices.begin() + static_cast<std::ptrdiff_t>(first);
      std::rotate(corners, corners + 1, corners + size);
      first += size;
    }
  }
  return pieces;
}

// A bent quad (two opposite corners raised) and a small upright triangle through its middle,
// between the two surfaces the quad's two splits make.
std::vector<PolygonMesh> bent_quad_with_upright_triangle() {
  PolygonMesh quad;
  quad.positions = {Vec3(0, 0, 0), Vec3(1, 0, 0.3), Vec3(1, 1, 0), Vec3(0, 1, 0.3)};
  quad.face_sizes = {4};
  quad.face_indices = {0, 1, 2, 3};
  PolygonMesh upright;
  upright.positions = {Vec3(0.42, 0.53, 0.1), Vec3(0.58, 0.51, 0.1), Vec3(0.5, 0.52, 0.5)};
  upright.face_sizes = {3};
  upright.face_indices = {0, 1, 2};
  return {quad, upright};
}

// The bent quad and upright triangle: clean for the library's split, crossed
// for the other one (Blender's BVH may split a quad so). The output must be clean for both.
TEST(Untangler, ABentQuadIsCleanForBothOfItsSplits) {
  const std::vector<PolygonMesh> pieces = bent_quad_with_upright_triangle();
  const Case c(pieces);
  const ClothMesh turned = ClothMesh::build(other_diagonals(pieces));
  ASSERT_EQ(brute_force_pairs(c.mesh, c.input), 0u);
  ASSERT_GT(brute_force_pairs(turned, c.input), 0u);
  Positions output;
  const UntangleReport report = untangle(c.mesh, c.input, nullptr, default_options(), output);
  EXPECT_EQ(report.pairs_after, 0u);
  EXPECT_EQ(brute_force_pairs(c.mesh, output), 0u);
  EXPECT_EQ(brute_force_pairs(turned, output), 0u);
}

// The same start, one iteration, no relaxation: the first frame must already work on the
// crossing that only the other split sees (it used to run the library's split, which saw
// nothing to push), and the report counts that split's pairs and contours.
TEST(Untangler, AStartThatCrossesOnlyInTheOtherSplitIsWorkedOnFromTheFirstFrame) {
  const std::vector<PolygonMesh> pieces = bent_quad_with_upright_triangle();
  const Case c(pieces);
  const ClothMesh turned = ClothMesh::build(other_diagonals(pieces));
  UntangleOptions options = default_options();
  options.max_iterations = 1;
  options.relax_iterations = 0;
  Positions output;
  const UntangleReport report = untangle(c.mesh, c.input, nullptr, options, output);
  EXPECT_EQ(report.pairs_before, brute_force_pairs(turned, c.input));
  double moved = 0;
  for (std::size_t v = 0; v < output.size(); ++v) {
    moved = std::max(moved, (output[v] - c.input[v]).norm());
  }
  EXPECT_GT(moved, 1e-3);
  EXPECT_EQ(report.pairs_after, brute_force_pairs(turned, output));
  const std::size_t contours =
      report.contours_left[0] + report.contours_left[1] + report.contours_left[2];
  EXPECT_EQ(contours > 0, report.pairs_after > 0);
}

// The offset of a quad's diagonal b-d from its diagonal a-c along the quad's normal: 0 for a
// flat quad, the height of the tetrahedron between its two splits otherwise.
double quad_height(const Positions& x, Index a, Index b, Index c, Index d) {
  const Vec3 n = (x[c] - x[a]).cross(x[d] - x[b]).normalized();
  return std::abs(0.5 * (x[b] + x[d] - x[a] - x[c]).dot(n));
}

// One frame of one solver iteration on a bent quad at rest (no gravity, response, proximity or
// strain limit: nothing else moves it): a flat-listed quad loses a fifth of its height, with
// the two diagonals kept as they are and the centre kept; a pinned corner stays and the height
// still drops by a fifth; the other split of the quad gives the same.
TEST(Untangler, AFlatListedQuadLosesAFifthOfItsHeightPerSolverIteration) {
  PolygonMesh quad;
  quad.positions = {Vec3(0, 0, 0), Vec3(1, 0, 0.3), Vec3(1.1, 1, 0.05), Vec3(0, 0.9, 0.2)};
  quad.face_sizes = {4};
  quad.face_indices = {0, 1, 2, 3};
  Settings settings;
  settings.proximity = false;
  settings.gravity = Vec3::Zero();
  settings.iterations = 1;
  auto step = [&](const std::vector<PolygonMesh>& pieces, const std::vector<double>& mass,
                  bool flat) {
    const ClothMesh mesh = ClothMesh::build(pieces);
    const Detection detection(mesh, mesh.rest_positions);
    Solver solver(detection.bvh());
    const std::vector<std::array<Index, 4>> quads{{0, 1, 2, 3}};
    const Positions previous = mesh.rest_positions;
    const std::vector<Sphere> no_spheres;
    Positions x = previous;
    SolverInput input{settings, mass,    previous, no_spheres, std::nullopt,
                      nullptr,  nullptr, nullptr,  0.0,        flat ? &quads : nullptr};
    SolverOutput output;
    solver.solve(input, x, output);
    return x;
  };
  const Positions& x = quad.positions;
  const double height = quad_height(x, 0, 1, 2, 3);
  ASSERT_GT(height, 0.1);
  const std::vector<double> free(4, 1.0);
  EXPECT_EQ(step({quad}, free, false), x);  // at rest, nothing else moves it

  const Positions y = step({quad}, free, true);
  EXPECT_NEAR(quad_height(y, 0, 1, 2, 3), 0.8 * height, 1e-12);
  EXPECT_LT((y[2] - y[0] - (x[2] - x[0])).norm(), 1e-12);
  EXPECT_LT((y[3] - y[1] - (x[3] - x[1])).norm(), 1e-12);
  EXPECT_LT((y[0] + y[1] + y[2] + y[3] - (x[0] + x[1] + x[2] + x[3])).norm(), 1e-12);

  const Positions turned = step(other_diagonals({quad}), free, true);
  for (Index v = 0; v < 4; ++v) EXPECT_LT((turned[v] - y[v]).norm(), 1e-12) << v;

  // Corner 0 pinned: the smallest move of the other three that lowers the diagonals' offset by
  // a fifth (along the normal, corner 2 against 1 and 3, each by the same amount t).
  const Positions pinned = step({quad}, {0.0, 1.0, 1.0, 1.0}, true);
  const Vec3 n = (x[2] - x[0]).cross(x[3] - x[1]).normalized();
  const double t = 0.2 * (0.5 * (x[1] + x[3] - x[0] - x[2]).dot(n)) / 1.5;
  EXPECT_EQ(pinned[0], x[0]);
  EXPECT_LT((pinned[1] - (x[1] - t * n)).norm(), 1e-12);
  EXPECT_LT((pinned[2] - (x[2] + t * n)).norm(), 1e-12);
  EXPECT_LT((pinned[3] - (x[3] - t * n)).norm(), 1e-12);
}

// The bent quad of ABentQuadIsCleanForBothOfItsSplits: its polygon is in a crossing (of the
// other split), so the untangler makes it flatter while it pushes the triangle out; without the
// flattening the quad kept most of its bend. The flattening acts over the frames that follow a
// crossing, so the push is the sequence's gentle one (the strongest clears this in one frame).
TEST(Untangler, TheQuadOfACrossingComesOutFlatter) {
  const Case c(bent_quad_with_upright_triangle());
  UntangleOptions options = default_options();
  options.strength_scale = options.sequence_strength_scale;
  Positions output;
  const UntangleReport report = untangle(c.mesh, c.input, nullptr, options, output);
  EXPECT_EQ(report.pairs_after, 0u);
  const double before = quad_height(c.input, 0, 1, 2, 3);
  const double after = quad_height(output, 0, 1, 2, 3);
  EXPECT_LT(after, 0.5 * before);
}

}  // namespace
}  // namespace untangle

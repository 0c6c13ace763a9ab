// Untangler: hand-built tangles (a folded sheet whose back half bulges through the front, a
// sheet corner poking through another) end free of intersections by an independent all-pairs
// test, with the edge lengths of the input kept within 5 %; pins hold, the input is untouched,
// a clean input comes back unchanged, cancel stops, threads do not change the result, the strain
// limit bounds the output, a sequence carries its correction from frame to frame, and the quads
// of crossings are made flatter (a fifth of their bend per solver iteration).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

#include "untangle/detection.hpp"
#include "untangle/solver.hpp"
#include "untangle/untangler.hpp"

namespace untangle {
namespace {

// Independent of the detector: orientation signs instead of Moller-Trumbore, all pairs.
double orient(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
  return (b - a).cross(c - a).dot(d - a);
}

// A transversal crossing: the segment's ends strictly on both sides of the triangle's plane and
// the segment strictly inside its three edges. Signs within a relative tolerance count as zero,
// so coplanar neighbours (flat cloth) and crossings through an edge are not hits.
bool segment_crosses_triangle(const Vec3& p, const Vec3& q, const Vec3& a, const Vec3& b,
                              const Vec3& c) {
  const double scale = std::pow((b - a).norm() + (c - a).norm() + (q - p).norm(), 3);
  const double eps = 1e-9 * scale;
  const double dp = orient(a, b, c, p), dq = orient(a, b, c, q);
  if (!((dp > eps && dq < -eps) || (dp < -eps && dq > eps))) return false;
  const double s1 = orient(p, q, a, b), s2 = orient(p, q, b, c), s3 = orient(p, q, c, a);
  return (s1 > eps && s2 > eps && s3 > eps) || (s1 < -eps && s2 < -eps && s3 < -eps);
}

std::size_t brute_force_pairs(const ClothMesh& mesh, const Positions& x) {
  std::size_t pairs = 0;
  const std::size_t n = mesh.triangle_count();
  for (std::size_t i = 0; i < n; ++i) {
    const auto& a = mesh.triangles[i];
    for (std::size_t j = i + 1; j < n; ++j) {
      const auto& b = mesh.triangles[j];
      bool shared = false;
      for (Index u : a) shared = shared || std::find(b.begin(), b.end(), u) != b.end();
      if (shared) continue;
      bool hit = false;
      for (int k = 0; k < 3 && !hit; ++k) {
        hit = segment_crosses_triangle(x[a[k]], x[a[(k + 1) % 3]], x[b[0]], x[b[1]], x[b[2]]) ||
              segment_crosses_triangle(x[b[k]], x[b[(k + 1) % 3]], x[a[0]], x[a[1]], x[a[2]]);
      }
      pairs += hit;
    }
  }
  return pairs;
}

// Over the polygon edges: the diagonal that splits a quad is not an edge of the user's mesh.
double strain_against(const ClothMesh& mesh, const Positions& reference, const Positions& x) {
  double strain = 0;
  for (const MeshEdge& e : mesh.edges) {
    if (e.triangle_count == 2 &&
        mesh.triangle_polygon[e.triangles[0]] == mesh.triangle_polygon[e.triangles[1]]) {
      continue;
    }
    const double before = (reference[e.vertices[0]] - reference[e.vertices[1]]).norm();
    const double after = (x[e.vertices[0]] - x[e.vertices[1]]).norm();
    strain = std::max(strain, std::abs(after / before - 1));
  }
  return strain;
}

// One sheet, 16 x 24 at spacing 0.1: the front half flat in z = 0, the back half folded under it
// at z = -0.04 with a ridge (elongated bump) that rises 0.05 through the front half.
PolygonMesh folded_ridge(double ridge_x = 0.75, double height = 0.09) {
  const Index columns = 16, rows = 24;
  const double s = 0.1;
  return quad_grid(columns, rows, [&](Index i, Index j) {
    if (j < rows / 2) return Vec3(i * s, j * s, 0.0);
    const double x = i * s + 0.031;  // not under the front half's edges: no hit through an edge
    const double y = (rows - 1 - j) * s + 0.5 * s;
    const double dx = (x - ridge_x) / 0.35, dy = (y - 0.6) / 0.22;
    return Vec3(x, y, -0.04 + height * std::exp(-dx * dx - dy * dy));
  });
}

// Two sheets: a flat one in z = 0 and a square turned by 45 degrees about z and tilted, whose
// lowest corner pokes 0.12 through the first.
std::vector<PolygonMesh> corner_through_sheet() {
  const double s = 0.1;
  PolygonMesh flat = quad_grid(15, 15, [&](Index i, Index j) {
    return Vec3(-0.7 + i * s + 0.0037, -0.7 + j * s + 0.0021, 0.0);
  });
  const double c = std::cos(std::numbers::pi / 4),
               tilt = 0.9;  // tilt: z rises along the sheet's diagonal
  PolygonMesh tilted = quad_grid(11, 11, [&](Index i, Index j) {
    const double u = i * s, v = j * s;  // the corner (0, 0) is the lowest
    return Vec3((u - v) * c + 0.013, (u + v) * c * std::cos(tilt) - 0.35,
                (u + v) * c * std::sin(tilt) - 0.12);
  });
  return {flat, tilted};
}

// Blender's "two objects cut into each other": a 2 x 2 grid of 21 x 21 vertices in z = 0 and
// a 1.2 x 1.2 one turned by the Euler angles (0.05, 0.6, 0.3) about x, y, z and lifted by 0.3,
// whose lower part cuts through the first along one open contour.
std::vector<PolygonMesh> tilted_sheet_through_flat_one() {
  PolygonMesh flat =
      quad_grid(21, 21, [](Index i, Index j) { return Vec3(-1 + 0.1 * i, -1 + 0.1 * j, 0); });
  const Eigen::Matrix3d turn =
      (Eigen::AngleAxisd(0.3, Vec3::UnitZ()) * Eigen::AngleAxisd(0.6, Vec3::UnitY()) *
       Eigen::AngleAxisd(0.05, Vec3::UnitX()))
          .toRotationMatrix();
  PolygonMesh tilted = quad_grid(21, 21, [&](Index i, Index j) {
    return Vec3(turn * Vec3(-0.6 + 0.06 * i, -0.6 + 0.06 * j, 0) + Vec3(0.1, 0.05, 0.3));
  });
  return {flat, tilted};
}

struct Case {
  ClothMesh mesh;
  Positions input;
  explicit Case(const std::vector<PolygonMesh>& pieces)
      : mesh(ClothMesh::build(pieces)), input(mesh.rest_positions) {}
};

UntangleOptions default_options() {
  UntangleOptions options;
  options.settings.threads = 2;
  return options;
}

void expect_resolved(const Case& c, const UntangleReport& report, const Positions& output) {
  EXPECT_GT(report.pairs_before, 0u);
  EXPECT_EQ(report.pairs_before, brute_force_pairs(c.mesh, c.input));
  EXPECT_EQ(report.pairs_after, 0u);
  EXPECT_EQ(brute_force_pairs(c.mesh, output), 0u);
  const double strain = strain_against(c.mesh, c.input, output);
  EXPECT_LE(strain, 0.05);
  EXPECT_NEAR(report.max_edge_strain, strain, 1e-12);
  EXPECT_FALSE(report.cancelled);
  EXPECT_GT(report.iterations, 0);
  EXPECT_EQ(report.contours_left, (std::array<std::size_t, 3>{0, 0, 0}));
}

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

// A push too weak to move anything stalls: ICM then goes on with Ye's rule (once), and not
// when the fallback is off or the method is not ICM.
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

}  // namespace
}  // namespace untangle

// Kikuchi & Kanai 2025 response: depths of the projected overlap, the PBD projection of a pair
// (each triangle as a whole, by inverse mass), the per-frame cap and the remembered side.
#include <gtest/gtest.h>

#include <cmath>

#include "untangle/bvh.hpp"
#include "untangle/responses/kikuchi.hpp"

namespace untangle {
namespace {

PolygonMesh triangle(const Vec3& a, const Vec3& b, const Vec3& c) {
  return {{a, b, c}, {3}, {0, 1, 2}};
}

// Triangle A lies in z = 0 with normal +z; B is tilted and crosses it.
struct TwoTriangles {
  ClothMesh mesh;
  Positions x;
  std::vector<double> inverse_mass{1, 1, 1, 0.5, 0.5, 0.5};  // A weighs 3, B weighs 6
  explicit TwoTriangles(const std::array<Vec3, 3>& b) {
    const std::vector<PolygonMesh> pieces{triangle(Vec3(0, 0, 0), Vec3(2, 0, 0), Vec3(0, 2, 0)),
                                          triangle(b[0], b[1], b[2])};
    mesh = ClothMesh::build(pieces);
    x = mesh.rest_positions;
  }
};

// B rises through A: its corner (0.6, 0.6, 0.1) is 0.1 above A, inside it.
const std::array<Vec3, 3> kRising{Vec3(0.4, 0.4, -0.3), Vec3(0.8, 0.4, -0.3), Vec3(0.6, 0.6, 0.1)};
// B dips through A: mostly above, its corner (0.6, 0.6, -0.1) 0.1 below.
const std::array<Vec3, 3> kDipping{Vec3(0.4, 0.4, 0.3), Vec3(0.8, 0.4, 0.3), Vec3(0.6, 0.6, -0.1)};

// One frame of the response. The thickness is 0 unless given: the pair then ends exactly
// touching, which the hand-computed depths below check. `start` is the state at the start of
// the frame (none by default).
Displacement respond(KikuchiResponse& response, const TwoTriangles& scene, bool crossing,
                     double strength, double thickness = 0, const Positions* start = nullptr) {
  Bvh bvh(scene.mesh, scene.x);
  bvh.refit(scene.x, 0.25);
  Intersections intersections;
  if (crossing) intersections.pairs = {{0, 1}};
  const Contours contours;
  Settings settings;
  settings.response_strength = strength;
  settings.thickness = thickness;
  settings.cull = false;
  const ResponseInput input{
      scene.mesh, scene.x, scene.inverse_mass, intersections, contours, settings, 1.0, bvh, start};
  return response.compute(input);
}

void expect_near(const Vec3& actual, const Vec3& expected, double tolerance = 1e-12) {
  EXPECT_NEAR((actual - expected).norm(), 0.0, tolerance)
      << "actual " << actual.transpose() << ", expected " << expected.transpose();
}

// The depth is the deepest corner of the overlap on the wrong side, computed by hand: B's corner
// 0.1 above A; A's deepest point in front of B's plane (normal (0,-2,1)/sqrt 5) is where the
// overlap meets y = 0, at height 1.1 / sqrt 5.
TEST(Kikuchi, PenetrationDepthIsTheDeepestCornerOfTheOverlap) {
  const std::array<Vec3, 3> a{Vec3(0, 0, 0), Vec3(2, 0, 0), Vec3(0, 2, 0)};
  EXPECT_NEAR(penetration_depth(a, kRising, -1), 0.1, 1e-12);
  EXPECT_NEAR(penetration_depth(a, kRising, +1), 0.3, 1e-12);
  EXPECT_NEAR(penetration_depth(kRising, a, -1), 1.1 / std::sqrt(5.0), 1e-12);
  // Entirely beside A: nothing over it, no depth.
  const std::array<Vec3, 3> beside{Vec3(3, 3, -1), Vec3(4, 3, -1), Vec3(3, 4, 1)};
  EXPECT_EQ(penetration_depth(a, beside, -1), 0.0);
}

// One projection separates the pair by the smaller depth (0.1, measured against A, so along A's
// normal with the default side: B behind A), each triangle moving as a whole, B by 1/3 of it
// and A by 2/3 (inverse masses 1/6 and 1/3).
TEST(Kikuchi, OneProjectionSeparatesBySmallerDepthInInverseMassProportion) {
  TwoTriangles scene(kRising);
  KikuchiResponse response;
  const Displacement d = respond(response, scene, true, 100.0);
  ASSERT_EQ(d.delta.size(), 6u);
  for (int v = 0; v < 3; ++v) expect_near(d.delta[v], Vec3(0, 0, 0.1 * 2.0 / 3.0));
  for (int v = 3; v < 6; ++v) expect_near(d.delta[v], Vec3(0, 0, -0.1 / 3.0));
  // Applied, B's deepest corner ends exactly on A's plane: the depth left is 0.
  std::array<Vec3, 3> a, b;
  for (int i = 0; i < 3; ++i) {
    a[i] = scene.x[i] + d.delta[i];
    b[i] = scene.x[3 + i] + d.delta[3 + i];
  }
  EXPECT_NEAR(penetration_depth(a, b, -1), 0.0, 1e-12);
}

// The response strength caps the move of a pair per frame at strength * spacing.
TEST(Kikuchi, CapLimitsTheMoveOfOnePair) {
  TwoTriangles scene(kRising);
  KikuchiResponse response;
  const Displacement d = respond(response, scene, true, 0.02);
  ASSERT_EQ(d.delta.size(), 6u);
  const Vec3 relative = d.delta[3] - d.delta[0];
  EXPECT_NEAR(relative.norm(), 0.02, 1e-12);
  expect_near(d.delta[0], Vec3(0, 0, 0.02 * 2.0 / 3.0));
  expect_near(d.delta[4], Vec3(0, 0, -0.02 / 3.0));
}

// A pinned corner holds its whole triangle; the other one takes the full move.
TEST(Kikuchi, PinnedTriangleDoesNotMove) {
  TwoTriangles scene(kRising);
  scene.inverse_mass[1] = 0;
  KikuchiResponse response;
  const Displacement d = respond(response, scene, true, 100.0);
  for (int v = 0; v < 3; ++v) expect_near(d.delta[v], Vec3::Zero());
  for (int v = 3; v < 6; ++v) expect_near(d.delta[v], Vec3(0, 0, -0.1));
}

// B is seen above A (close, not crossing) and then dips through it: the remembered side pushes
// it back up along A's normal by the 0.1 it dips. Without that history the default side
// (back faces touch) measures other depths and pushes along B's normal instead.
TEST(Kikuchi, RememberedSideIsUsedAfterCrossing) {
  TwoTriangles scene(kDipping);
  for (int v = 3; v < 6; ++v) scene.x[v].z() += 0.2;  // 0.1 to 0.5 above A: close, apart
  KikuchiResponse response;
  EXPECT_TRUE(respond(response, scene, false, 100.0).empty());
  ASSERT_EQ(response.memory().count(KikuchiResponse::pair_key(0, 1)), 1u);
  EXPECT_EQ(response.memory().at(KikuchiResponse::pair_key(0, 1)).side[0], 1);
  EXPECT_EQ(response.memory().at(KikuchiResponse::pair_key(0, 1)).side[1], -1);

  for (int v = 3; v < 6; ++v) scene.x[v].z() -= 0.2;  // now crossing
  const Displacement remembered = respond(response, scene, true, 100.0);
  for (int v = 0; v < 3; ++v) expect_near(remembered.delta[v], Vec3(0, 0, -0.1 * 2.0 / 3.0));
  for (int v = 3; v < 6; ++v) expect_near(remembered.delta[v], Vec3(0, 0, 0.1 / 3.0));

  // No history: side -1 for both; B's depth into A is 0.3, A's into B is 0.5 / sqrt 5 along
  // B's normal n = (0,2,1)/sqrt 5, the smaller one: B moves by +1/3 of it along n.
  KikuchiResponse fresh;
  const Displacement fixed_side = respond(fresh, scene, true, 100.0);
  const Vec3 n = Vec3(0, 2, 1) / std::sqrt(5.0);
  expect_near(fixed_side.delta[3], 0.5 / std::sqrt(5.0) / 3.0 * n);
}

// A pair that stays apart (not close, not crossing) is forgotten after kForgetFrames frames.
TEST(Kikuchi, SideIsForgottenWhenThePairSeparates) {
  TwoTriangles scene(kDipping);
  for (int v = 3; v < 6; ++v) scene.x[v].z() += 0.2;
  KikuchiResponse response;
  respond(response, scene, false, 1.0);
  ASSERT_EQ(response.memory().size(), 1u);
  for (int v = 3; v < 6; ++v) scene.x[v].z() += 5.0;  // far apart
  for (int frame = 0; frame < KikuchiResponse::kForgetFrames; ++frame) {
    respond(response, scene, false, 1.0);
    EXPECT_EQ(response.memory().size(), 1u) << "forgotten too early, frame " << frame;
  }
  respond(response, scene, false, 1.0);
  EXPECT_TRUE(response.memory().empty());
}

// With a thickness the pair is moved apart by the depth plus the thickness: the deepest corner
// ends the thickness away from the plane, on the valid side.
TEST(Kikuchi, PairEndsTheThicknessApart) {
  TwoTriangles scene(kRising);
  KikuchiResponse response;
  const double thickness = 0.05;
  const Displacement d = respond(response, scene, true, 100.0, thickness);
  ASSERT_EQ(d.delta.size(), 6u);
  for (int v = 0; v < 3; ++v) expect_near(d.delta[v], Vec3(0, 0, 0.15 * 2.0 / 3.0));
  for (int v = 3; v < 6; ++v) expect_near(d.delta[v], Vec3(0, 0, -0.15 / 3.0));
  // B's corner (0.6, 0.6) is the highest point over A: 0.1 above before, 0.05 below after.
  const double gap = (scene.x[0].z() + d.delta[0].z()) - (scene.x[5].z() + d.delta[5].z());
  EXPECT_NEAR(gap, thickness, 1e-12);
}

// B crosses A within one frame, with no history (a fresh response): the side it had at the start
// of the frame (0.1 to 0.5 above A) is the valid one. B is pushed back up along A's normal, as with
// a remembered side, and the side is remembered for the next frames.
TEST(Kikuchi, SideAtTheStartOfTheFrameIsUsedForANewCrossing) {
  TwoTriangles scene(kDipping);
  Positions start = scene.x;
  for (int v = 3; v < 6; ++v) start[v].z() += 0.2;
  KikuchiResponse response;
  const Displacement d = respond(response, scene, true, 100.0, 0.0, &start);
  ASSERT_EQ(d.delta.size(), 6u);
  for (int v = 0; v < 3; ++v) expect_near(d.delta[v], Vec3(0, 0, -0.1 * 2.0 / 3.0));
  for (int v = 3; v < 6; ++v) expect_near(d.delta[v], Vec3(0, 0, 0.1 / 3.0));
  ASSERT_EQ(response.memory().count(KikuchiResponse::pair_key(0, 1)), 1u);
  EXPECT_EQ(response.memory().at(KikuchiResponse::pair_key(0, 1)).side[0], 1);
  EXPECT_EQ(response.memory().at(KikuchiResponse::pair_key(0, 1)).side[1], -1);

  // The same crossing already at the start of the frame tells no side: the default is used.
  KikuchiResponse fresh;
  const Displacement fixed_side = respond(fresh, scene, true, 100.0, 0.0, &scene.x);
  const Vec3 n = Vec3(0, 2, 1) / std::sqrt(5.0);
  expect_near(fixed_side.delta[3], 0.5 / std::sqrt(5.0) / 3.0 * n);
}

// A proximity push against the move is dropped only where the valid side is known from history;
// on a pair moved to the fixed default side the push stays.
TEST(Kikuchi, OpposingProximityIsDroppedOnlyWhereTheSideIsKnown) {
  TwoTriangles scene(kDipping);
  KikuchiResponse guessing;
  const Displacement guessed = respond(guessing, scene, true, 100.0);
  ASSERT_EQ(guessed.delta.size(), 6u);
  for (int v = 0; v < 6; ++v) EXPECT_EQ(guessed.near_contour[v], 0) << "particle " << v;

  Positions start = scene.x;
  for (int v = 3; v < 6; ++v) start[v].z() += 0.2;
  KikuchiResponse knowing;
  const Displacement known = respond(knowing, scene, true, 100.0, 0.0, &start);
  ASSERT_EQ(known.delta.size(), 6u);
  EXPECT_TRUE(known.drop_opposing_proximity);
  for (int v = 0; v < 6; ++v) EXPECT_EQ(known.near_contour[v], 1) << "particle " << v;
}

}  // namespace
}  // namespace untangle

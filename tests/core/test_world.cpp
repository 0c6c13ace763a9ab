// World: bad input is rejected and changes nothing; grab picks the nearest free particle along the
// ray, drags it to the target and release keeps its velocity; two sheets pressed together keep
// the thickness apart and never cross (brute force), but do cross without proximity; the final
// state is bit-identical for 1 and 2 threads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "support/brute_force.hpp"
#include "support/crumpled_mesh.hpp"
#include "untangle/proximity.hpp"
#include "untangle/scenes.hpp"
#include "untangle/world.hpp"

namespace untangle {
namespace {

Scene floating_sheet(int quads) {
  Scene scene;
  scene.pieces.push_back(test::grid(quads, quads, 0.1));
  scene.settings.gravity = Vec3::Zero();
  scene.settings.untangle = false;
  return scene;
}

TEST(World, BadInputIsRejectedAndChangesNothing) {
  World world(floating_sheet(4));
  const Positions before = world.positions();
  Positions wrong_size(before.begin(), before.end() - 1);
  EXPECT_THROW(world.set_positions(wrong_size), std::invalid_argument);
  Positions with_nan = before;
  with_nan[3].y() = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(world.set_positions(with_nan), std::invalid_argument);
  EXPECT_THROW(world.set_velocities(with_nan), std::invalid_argument);
  EXPECT_EQ(world.positions(), before);
  Settings bad = world.settings();
  bad.iterations = 0;
  EXPECT_THROW(world.set_settings(bad), std::invalid_argument);
  EXPECT_EQ(world.settings().iterations, 10);
  EXPECT_THROW(world.grab_move(Vec3::Zero(), Vec3::UnitZ()), std::logic_error);

  Scene scene = floating_sheet(4);
  scene.inverse_mass.assign(3, 1.0);
  EXPECT_THROW(World{scene}, std::invalid_argument);
  scene = floating_sheet(4);
  scene.inverse_mass.assign(25, -1.0);
  EXPECT_THROW(World{scene}, std::invalid_argument);
  scene = floating_sheet(4);
  scene.spheres.push_back({Vec3::Zero(), 0.0});
  EXPECT_THROW(World{scene}, std::invalid_argument);
  scene = floating_sheet(4);
  scene.settings.thickness = -1;
  EXPECT_THROW(World{scene}, std::invalid_argument);
}

// A sheet finer than the thickness (spacing 0.007, thickness 0.01) at rest with no force must
// stay where it is: the frame's thickness is held below half the spacing, otherwise particles
// two edges apart are close pairs whose pushes lift the sheet out of its plane.
TEST(World, SheetFinerThanTheThicknessStaysFlat) {
  Scene scene = floating_sheet(40);
  scene.pieces[0] = test::grid(40, 40, 0.007);
  scene.settings.thickness = 0.01;
  World world(scene);
  EXPECT_NEAR(world.thickness(), kMaxThicknessPerSpacing * world.spacing(), 1e-15);
  EXPECT_EQ(world.settings().thickness, 0.01);  // the user's setting is kept as given
  const Positions rest = world.positions();
  for (int frame = 0; frame < 10; ++frame) world.step();
  double moved = 0;
  for (std::size_t v = 0; v < rest.size(); ++v) {
    moved = std::max(moved, (world.positions()[v] - rest[v]).norm());
  }
  EXPECT_LT(moved, 1e-9);
}

TEST(World, GrabPicksTheNearestFreeParticleAlongTheRay) {
  // Two layers 0.1 apart; seen from above the upper one comes first along the ray.
  Scene scene;
  scene.pieces.push_back(test::grid(4, 4, 0.1));
  scene.pieces.push_back(test::grid(4, 4, 0.1, Vec3(0, 0, 0.1)));
  scene.settings.gravity = Vec3::Zero();
  scene.inverse_mass.assign(50, 1.0);
  const Index upper = 25;                     // vertex (i, j) of the upper layer: 25 + i + 5 j
  scene.inverse_mass[upper + 2 + 2 * 5] = 0;  // upper (2, 2) is pinned: not pickable
  World world(scene);
  const Vec3 down(0, 0, -1);
  ASSERT_TRUE(world.grab_begin(Vec3(0.11, 0.1, 1), down, 0.02));
  EXPECT_EQ(world.grabbed_particle(), upper + 1 + 1 * 5);
  world.grab_end();
  ASSERT_TRUE(world.grab_begin(Vec3(0.21, 0.2, 1), down, 0.02));
  EXPECT_EQ(world.grabbed_particle(), 2u + 2 * 5);  // the lower one under the pinned one
  world.grab_end();
  EXPECT_FALSE(world.grab_begin(Vec3(0.15, 0.15, 1), down, 0.02));  // between particles
  EXPECT_FALSE(world.grab_begin(Vec3(0.1, 0.1, -1), down, 0.02));   // all behind the origin
  EXPECT_EQ(world.grabbed_particle(), kNoIndex);
  EXPECT_THROW(world.grab_begin(Vec3::Zero(), Vec3::Zero(), 0.1), std::invalid_argument);
}

TEST(World, GrabDragsTheParticleToTheTargetInTheCameraPlaneAndReleaseKeepsTheVelocity) {
  World world(floating_sheet(10));
  const Index centre = 5 + 5 * 11;
  const Vec3 start = world.positions()[centre];
  ASSERT_TRUE(world.grab_begin(start + Vec3(0, 0, 2), Vec3(0, 0, -1), 0.01));
  ASSERT_EQ(world.grabbed_particle(), centre);
  // The target is off the drag plane (z = 0, facing a camera looking down): only its projection
  // counts.
  const double speed = 0.6;  // m/s along x
  Vec3 target = start + Vec3(0, 0, 0.4);
  for (int frame = 0; frame < 60; ++frame) {
    target.x() += speed * world.settings().time_step;
    world.grab_move(target, Vec3(0, 0, 1));
    world.step();
    const Vec3 in_plane(target.x(), target.y(), world.positions()[centre].z());
    ASSERT_LT((world.positions()[centre] - in_plane).norm(), 0.01) << frame;
  }
  EXPECT_NEAR(world.positions()[centre].z(), start.z(), 0.01);
  world.grab_end();
  EXPECT_EQ(world.grabbed_particle(), kNoIndex);
  world.step();
  EXPECT_NEAR(world.velocities()[centre].x(), speed, 0.3 * speed);
  Vec3 mean = Vec3::Zero();
  for (const Vec3& v : world.velocities())
    mean += v / static_cast<double>(world.velocities().size());
  EXPECT_GT(mean.x(), 0.5 * speed);  // no gravity: the released sheet keeps drifting
}

// The smallest distance from a vertex of one piece to a triangle of the other, both ways.
double closest_between_pieces(const ClothMesh& mesh, const Positions& x) {
  double best = std::numeric_limits<double>::infinity();
  for (Index t = 0; t < mesh.triangle_count(); ++t) {
    const auto& c = mesh.triangles[t];
    for (Index v = 0; v < mesh.vertex_count(); ++v) {
      if (mesh.vertex_piece[v] == mesh.triangle_piece[t]) continue;
      Vec3 bary;
      best = std::min(
          best, (x[v] - closest_point_on_triangle(x[v], x[c[0]], x[c[1]], x[c[2]], bary)).norm());
    }
  }
  return best;
}

// A fixed lower sheet and an upper one hanging from one pinned row 0.05 above it: gravity
// presses the upper sheet onto the lower one.
Scene pressed_sheets(bool proximity) {
  Scene scene;
  scene.pieces.push_back(test::grid(12, 12, 0.1));
  scene.pieces.push_back(test::grid(8, 8, 0.1, Vec3(0.23, 0.27, 0.05)));
  scene.inverse_mass.assign(169 + 81, 1.0);
  for (Index v = 0; v < 169; ++v) scene.inverse_mass[v] = 0;
  for (Index v = 0; v < 9; ++v) scene.inverse_mass[169 + v] = 0;
  scene.settings.untangle = false;
  scene.settings.thickness = 0.02;
  scene.settings.proximity = proximity;
  return scene;
}

TEST(World, ProximityKeepsPressedSheetsApartAndUncrossed) {
  World world(pressed_sheets(true));
  const double h = world.settings().thickness;
  for (int frame = 0; frame < 120; ++frame) {
    world.step();
    ASSERT_EQ(world.stats().pairs, 0u) << frame;
    ASSERT_TRUE(test::brute_force_pairs(world.mesh(), world.positions()).empty()) << frame;
    ASSERT_GT(closest_between_pieces(world.mesh(), world.positions()), 0.75 * h) << frame;
  }
  // It is really pressed: the free part lies on the lower sheet at about the thickness.
  EXPECT_LT(world.positions().back().z(), 1.5 * h);
  EXPECT_GT(world.stats().proximity_pairs, 50u);
}

TEST(World, WithoutProximityPressedSheetsCross) {
  World world(pressed_sheets(false));
  std::size_t detected = 0, brute = 0;
  for (int frame = 0; frame < 120; ++frame) {
    world.step();
    detected = std::max(detected, world.stats().pairs);
    brute = std::max(brute, test::brute_force_pairs(world.mesh(), world.positions()).size());
  }
  EXPECT_GT(detected, 0u);
  EXPECT_GT(brute, 0u);
  EXPECT_LT(world.positions().back().z(), 0.0);  // fallen through
}

std::uint64_t state_hash(const World& world) {
  std::uint64_t hash = 1469598103934665603ull;  // FNV-1a over the bytes of x and v
  auto add = [&hash](const Positions& values) {
    for (const Vec3& p : values) {
      for (int k = 0; k < 3; ++k) {
        unsigned char bytes[sizeof(double)];
        std::memcpy(bytes, &p[k], sizeof(double));
        for (unsigned char b : bytes) hash = (hash ^ b) * 1099511628211ull;
      }
    }
  };
  add(world.positions());
  add(world.velocities());
  return hash;
}

TEST(World, FinalStateIsIdenticalForOneAndTwoThreads) {
  std::uint64_t hashes[2];
  for (int threads = 1; threads <= 2; ++threads) {
    Scene scene = dropped_cloth();
    scene.settings.threads = threads;
    World world(scene);
    for (int frame = 0; frame < 45; ++frame) world.step();  // falls and lands on the sphere
    double lowest = 1e9;
    for (const Vec3& p : world.positions()) lowest = std::min(lowest, p.z());
    const Sphere& sphere = scene.spheres[0];
    EXPECT_LT(lowest, sphere.center.z() + sphere.radius);  // it reached the sphere
    hashes[threads - 1] = state_hash(world);
  }
  EXPECT_EQ(hashes[0], hashes[1]);
}

// The mesh-taking constructor (the untangler's, which builds the mesh once) must run the same
// pipeline as building from the scene's pieces: the same state after frames of a tangled scene.
TEST(World, AWorldOnABuiltMeshStepsLikeOneBuiltFromThePieces) {
  const Scene scene = tangled_start();
  World from_pieces(scene);
  World from_mesh(ClothMesh::build(scene.pieces), scene);
  std::size_t pairs_seen = 0;  // the response ran: there were intersections to untangle
  for (int frame = 0; frame < 5; ++frame) {
    from_pieces.step();
    from_mesh.step();
    EXPECT_EQ(from_mesh.stats().pairs, from_pieces.stats().pairs);
    pairs_seen += from_pieces.stats().pairs;
  }
  EXPECT_GT(pairs_seen, 0u);
  EXPECT_EQ(state_hash(from_mesh), state_hash(from_pieces));
}

// The solver (and its proximity search) is built by a world's first step. A rest shape set after
// that changes which triangles are detectable (a crushed rest shape has none in the lower
// sheet): the world must then step as one that never had the crushed rest shape.
TEST(World, ARestShapeSetAfterTheFirstStepReachesTheProximitySearch) {
  Scene scene;
  scene.pieces = {test::grid(4, 4, 0.1), test::grid(4, 4, 0.1, Vec3(0.033, 0.021, 0.015))};
  scene.settings.untangle = false;
  scene.settings.gravity = Vec3::Zero();
  scene.settings.thickness = 0.03;
  scene.settings.iterations = 1;
  const ClothMesh mesh = ClothMesh::build(scene.pieces);
  const Positions flat = mesh.rest_positions;
  Positions crushed = flat;
  for (std::size_t v = 0; v < scene.pieces[0].positions.size(); ++v) crushed[v].y() = 0;
  const Positions still(flat.size(), Vec3::Zero());
  World fresh(mesh, scene), rested(mesh, scene);
  rested.set_rest_shape(crushed);
  rested.step();
  for (World* world : {&fresh, &rested}) {
    world->set_rest_shape(flat);
    world->set_positions(flat);
    world->set_velocities(still);
    world->step();
  }
  EXPECT_GT(fresh.stats().proximity_pairs, 0u);
  EXPECT_EQ(rested.stats().proximity_pairs, fresh.stats().proximity_pairs);
  EXPECT_EQ(rested.positions(), fresh.positions());
}

TEST(World, DetectRefreshesIntersectionsWithoutStepping) {
  World world(tangled_start());
  const Positions before = world.positions();
  world.detect();
  EXPECT_EQ(world.positions(), before);
  EXPECT_EQ(world.stats().frame, 0u);
  EXPECT_GT(world.stats().pairs, 0u);
  EXPECT_EQ(world.stats().pairs, world.intersections().pairs.size());
}

}  // namespace
}  // namespace untangle

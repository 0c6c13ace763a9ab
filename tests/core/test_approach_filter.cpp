// The approach filter (approach_filter.hpp) on hand-built configurations with known answers: a
// sheet falling onto a pinned one faster than the thickness per frame is held at a tenth of the
// thickness on the next prediction; motions that do not approach keep their velocities; and a
// World whose sheet falls that fast never shows an intersection, frame after frame.
#include <gtest/gtest.h>

#include "support/crumpled_mesh.hpp"
#include "untangle/approach_filter.hpp"
#include "untangle/world.hpp"

namespace untangle {
namespace {

constexpr double kThickness = 0.01;
constexpr double kTimeStep = 0.01;

// A sheet of 5 x 5 quads at z = 0, pinned, and one of 2 x 2 quads 0.05 above its middle.
struct TwoSheets {
  ClothMesh mesh;
  std::vector<double> inverse_mass;
  Index upper_begin = 36;

  TwoSheets()
      : mesh(ClothMesh::build(std::vector<PolygonMesh>{
            test::grid(5, 5, 0.1), test::grid(2, 2, 0.1, Vec3(0.17, 0.21, 0.05))})) {
    inverse_mass.assign(mesh.vertex_count(), 1.0);
    for (Index v = 0; v < upper_begin; ++v) inverse_mass[v] = 0;
  }
};

Positions filtered(const TwoSheets& sheets, const Vec3& upper_velocity, std::size_t& held) {
  const Positions& x = sheets.mesh.rest_positions;
  Positions v(x.size(), Vec3::Zero());
  for (Index i = sheets.upper_begin; i < x.size(); ++i) v[i] = upper_velocity;
  const Bvh bvh(sheets.mesh, x);
  ProximitySearch search(bvh);
  held = filter_approach(search, {x, sheets.inverse_mass, kTimeStep, kThickness}, v);
  return v;
}

TEST(ApproachFilter, ASheetFallingThroughAnotherWithinOneFrameStopsAboveIt) {
  const TwoSheets sheets;
  std::size_t held = 0;
  // 8 m/s for 0.01 s: the prediction would end 0.03 below the pinned sheet, farther than the
  // thickness from it, where no proximity pair at the prediction sees it.
  const Positions v = filtered(sheets, Vec3(0, 0, -8), held);
  EXPECT_GT(held, 0u);
  const Positions& x = sheets.mesh.rest_positions;
  for (Index i = sheets.upper_begin; i < x.size(); ++i) {
    const double z = x[i].z() + kTimeStep * v[i].z();
    // Held at a tenth of the thickness at least; a triangle held by several points under it is
    // lifted by more than each one asks (position-based projection), but by less than twice
    // the thickness here, nowhere near the 0.08 it would have fallen.
    EXPECT_GE(z, 0.1 * kThickness - 1e-12) << i;
    EXPECT_LT(z, 2 * kThickness) << i;
    EXPECT_NEAR(v[i].x(), 0, 1e-12);
    EXPECT_NEAR(v[i].y(), 0, 1e-12);
  }
  for (Index i = 0; i < sheets.upper_begin; ++i) EXPECT_EQ(v[i], Vec3::Zero());
}

TEST(ApproachFilter, MotionsThatDoNotApproachKeepTheirVelocities) {
  const TwoSheets sheets;
  std::size_t held = 0;
  for (const Vec3& velocity : {Vec3(0, 0, 8), Vec3(3, -2, 0), Vec3(0, 0, -1)}) {
    SCOPED_TRACE(velocity.transpose());
    // Away, sideways, and toward but stopping 0.04 above: no pair is held.
    const Positions v = filtered(sheets, velocity, held);
    EXPECT_EQ(held, 0u);
    for (Index i = sheets.upper_begin; i < v.size(); ++i) EXPECT_EQ(v[i], velocity);
  }
}

TEST(ApproachFilter, AWorldWhoseSheetFallsFasterThanTheThicknessPerFrameNeverIntersects) {
  const TwoSheets sheets;
  Scene scene;
  scene.pieces = {test::grid(5, 5, 0.1), test::grid(2, 2, 0.1, Vec3(0.17, 0.21, 0.13))};
  // Tilted, 0.13 to 0.23 above the pinned sheet: the second prediction would carry its lower
  // half through it (a flat sheet would pass through whole and cross nothing).
  scene.initial_positions = ClothMesh::build(scene.pieces).rest_positions;
  for (Index i = sheets.upper_begin; i < sheets.mesh.vertex_count(); ++i) {
    scene.initial_positions[i].z() += 0.5 * (scene.initial_positions[i].x() - 0.17);
  }
  scene.inverse_mass = sheets.inverse_mass;
  scene.initial_velocities.assign(sheets.mesh.vertex_count(), Vec3::Zero());
  for (Index i = sheets.upper_begin; i < sheets.mesh.vertex_count(); ++i) {
    scene.initial_velocities[i] = Vec3(0, 0, -8);
  }
  scene.settings.gravity = Vec3::Zero();
  scene.settings.time_step = kTimeStep;
  scene.settings.thickness = kThickness;
  World world(scene);
  for (int frame = 0; frame < 20; ++frame) {
    world.step();
    EXPECT_EQ(world.stats().pairs, 0u) << "frame " << frame;
  }
  for (Index i = sheets.upper_begin; i < sheets.mesh.vertex_count(); ++i) {
    EXPECT_GT(world.positions()[i].z(), 0) << i;
  }
}

}  // namespace
}  // namespace untangle

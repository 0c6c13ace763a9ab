// Bvh culling by the projected border (Volino 1994): flat and gently curved sheets are culled
// entirely; a disk whose border overlaps itself seen along the cone axis is not.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "support/crumpled_mesh.hpp"
#include "untangle/bvh.hpp"
#include "untangle/narrow_phase.hpp"

namespace untangle {
namespace {

// A flat sheet, a gently curved one (a 60 degree arc of a cylinder) and a mild saddle: the
// root is a disk, cullable, and the self test tests no leaf pair at all.
TEST(Bvh, FlatAndGentlyCurvedSheetsAreCulledEntirely) {
  const int n = 30;
  const double h = 0.1;
  PolygonMesh flat = test::grid(n, n, h);
  PolygonMesh arc = test::grid(n, n, h);
  const double radius = n * h / (std::numbers::pi / 3);  // the width spans 60 degrees
  for (Vec3& p : arc.positions) {
    const double a = p.x() / radius;
    p = Vec3(radius * std::sin(a), p.y(), radius * (1 - std::cos(a)));
  }
  PolygonMesh saddle = test::grid(n, n, h);
  for (Vec3& p : saddle.positions) p.z() = 0.2 * (p.x() - 1.5) * (p.y() - 1.5);
  for (const PolygonMesh* sheet : {&flat, &arc, &saddle}) {
    const ClothMesh mesh = ClothMesh::build(std::span(sheet, 1));
    const Bvh bvh(mesh, sheet->positions);
    const Index root = bvh.roots()[0];
    EXPECT_TRUE(bvh.node_is_disk(root));
    EXPECT_TRUE(bvh.nodes()[root].cone.narrower_than_right_angle());
    EXPECT_TRUE(bvh.nodes()[root].cullable);
    const Candidates c = bvh.find_candidates(true);
    EXPECT_TRUE(c.leaf_pairs.empty());
    EXPECT_EQ(c.culled_nodes, std::vector<Index>{root});
    EXPECT_FALSE(bvh.find_candidates(false).leaf_pairs.empty());
    const Intersections found = find_intersections(mesh, bvh, sheet->positions);
    EXPECT_EQ(found.candidate_pairs, 0u);
  }
}

// The second half of the culling test matters: a ramp winding one and a half turns around the
// z axis (a spiral staircase strip) has all normals within a narrow cone, and it is a disk,
// but seen from above its border overlaps itself, so it must not be culled.
TEST(Bvh, SelfOverlappingBorderIsNotCulled) {
  PolygonMesh ramp = test::grid(60, 4, 1.0);
  for (Vec3& p : ramp.positions) {
    const double turn = p.x() / 60 * 3 * std::numbers::pi;
    const double r = 1.0 + 0.25 * p.y();
    p = Vec3(r * std::cos(turn), r * std::sin(turn), 0.5 * turn);
  }
  const ClothMesh mesh = ClothMesh::build(std::span(&ramp, 1));
  const Bvh bvh(mesh, ramp.positions);
  const Index root = bvh.roots()[0];
  ASSERT_TRUE(bvh.node_is_disk(root));
  const NormalCone& cone = bvh.nodes()[root].cone;
  // The independent check that the cone test alone would pass: every normal within 80 degrees
  // of the z axis, all on the same side.
  double side = 0;
  for (const auto& t : mesh.triangles) {
    const Vec3& a = ramp.positions[t[0]];
    const Vec3 normal = (ramp.positions[t[1]] - a).cross(ramp.positions[t[2]] - a).normalized();
    if (side == 0) side = normal.z() > 0 ? 1 : -1;
    EXPECT_GT(side * normal.z(), std::cos(80 * std::numbers::pi / 180));
  }
  EXPECT_TRUE(cone.narrower_than_right_angle());
  EXPECT_FALSE(bvh.nodes()[root].cullable);
}

}  // namespace
}  // namespace untangle

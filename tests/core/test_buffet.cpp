// Buffet et al. 2019 layer response: a patch of the outer sheet pushed behind the inner one is
// brought back to the right side in capped steps without momentum; one sheet gets no response;
// the layer order decides which side is right.
#include <gtest/gtest.h>

#include <optional>

#include "untangle/bvh.hpp"
#include "untangle/responses/buffet.hpp"

namespace untangle {
namespace {

constexpr int kSide = 10;  // vertices per row
constexpr double kSpacing = 0.1;
constexpr double kThickness = 0.01;

// A flat kSide x kSide grid at height z, quads counter-clockwise seen from above (normal +z).
PolygonMesh grid(double z) {
  return quad_grid(kSide, kSide,
                   [z](Index i, Index j) { return Vec3(i * kSpacing, j * kSpacing, z); });
}

// Height of a sheet (a height field over the grid's square) at (x, y), from its triangles.
std::optional<double> height_at(const ClothMesh& mesh, const Positions& x, Index piece,
                                const Vec3& p) {
  for (Index t = mesh.piece_triangle_begin[piece]; t < mesh.piece_triangle_begin[piece + 1]; ++t) {
    const auto& c = mesh.triangles[t];
    const Eigen::Vector2d a = x[c[0]].head<2>(), b = x[c[1]].head<2>(), d = x[c[2]].head<2>();
    Eigen::Matrix2d m;
    m << b - a, d - a;
    const Eigen::Vector2d uv = m.inverse() * (p.head<2>() - a);
    if (uv.minCoeff() < -1e-9 || uv.sum() > 1 + 1e-9) continue;
    return (1 - uv.sum()) * x[c[0]].z() + uv[0] * x[c[1]].z() + uv[1] * x[c[2]].z();
  }
  return std::nullopt;
}

struct Frame {
  Displacement displacement;
  LayerStats stats;
};

Frame respond(BuffetResponse& response, const ClothMesh& mesh, const Positions& x,
              double strength) {
  Bvh bvh(mesh, x);
  bvh.refit(x, kThickness);
  const Intersections intersections;
  const Contours contours;
  Settings settings;
  settings.thickness = kThickness;
  settings.response_strength = strength;
  const std::vector<double> inverse_mass(mesh.vertex_count(), 1.0);
  const ResponseInput input{mesh,     x,        inverse_mass, intersections,
                            contours, settings, kSpacing,     bvh};
  Frame frame{response.compute(input), {}};
  frame.stats = response.stats();
  return frame;
}

bool in_patch(int i, int j) {
  return i >= 3 && i <= 5 && j >= 3 && j <= 5;
}

// The outer sheet (piece 1) 0.05 above the inner one, with a 3 x 3 patch pushed 0.03 below it.
// Repeated frames bring every vertex of the outer sheet above the inner sheet (checked on the
// height fields), every step no longer than the cap, and the response never carries momentum.
TEST(Buffet, WrongSidePatchEndsOnTheRightSideInCappedSteps) {
  const std::vector<PolygonMesh> pieces{grid(0.0), grid(0.05)};
  const ClothMesh mesh = ClothMesh::build(pieces);
  Positions x = mesh.rest_positions;
  const Index outer = mesh.piece_vertex_begin[1];
  for (int j = 0; j < kSide; ++j) {
    for (int i = 0; i < kSide; ++i) {
      if (in_patch(i, j)) x[outer + j * kSide + i].z() = -0.03;
    }
  }
  const double strength = 0.05;
  const double cap = strength * kSpacing;
  BuffetResponse response;
  bool capped_once = false;
  for (int frame = 0; frame < 200; ++frame) {
    const Frame f = respond(response, mesh, x, strength);
    EXPECT_FALSE(f.stats.single_sheet);
    if (f.displacement.empty()) break;
    EXPECT_FALSE(f.displacement.carries_momentum);
    capped_once = capped_once || f.stats.capped_vertices > 0;
    for (std::size_t v = 0; v < x.size(); ++v) {
      ASSERT_LE(f.displacement.delta[v].norm(), cap + 1e-12) << "vertex " << v;
      x[v] += f.displacement.delta[v];
    }
  }
  EXPECT_TRUE(capped_once) << "the cap was never reached: the test does not check it";
  for (Index v = outer; v < mesh.vertex_count(); ++v) {
    const auto below = height_at(mesh, x, 0, x[v]);
    if (below) {
      EXPECT_GT(x[v].z(), *below) << "outer vertex " << v - outer << " still behind";
    }
  }
  for (Index v = 0; v < outer; ++v) {
    const auto above = height_at(mesh, x, 1, x[v]);
    if (above) {
      EXPECT_LT(x[v].z(), *above) << "inner vertex " << v << " still in front";
    }
  }
  // Untouched far from the patch: the sheets there were already a thickness apart.
  EXPECT_DOUBLE_EQ(x[outer].z(), 0.05);
  EXPECT_DOUBLE_EQ(x[0].z(), 0.0);
}

// One sheet: no layers to order, so no displacement, and the stats say why.
TEST(Buffet, OneSheetGetsNoResponse) {
  const std::vector<PolygonMesh> pieces{grid(0.0)};
  const ClothMesh mesh = ClothMesh::build(pieces);
  Positions x = mesh.rest_positions;
  x[45].z() = 0.3;  // a bump: irrelevant with a single layer
  BuffetResponse response;
  const Frame f = respond(response, mesh, x, 1.0);
  EXPECT_TRUE(f.displacement.empty());
  EXPECT_TRUE(f.stats.single_sheet);
}

// With the order reversed (piece 1 innermost), the outer sheet of the scene above is now on
// the wrong side everywhere its foot point lies on piece 0, and is pushed down.
TEST(Buffet, LayerOrderDecidesTheRightSide) {
  const std::vector<PolygonMesh> pieces{grid(0.0), grid(0.05)};
  const ClothMesh mesh = ClothMesh::build(pieces);
  BuffetResponse response;
  EXPECT_TRUE(respond(response, mesh, mesh.rest_positions, 1.0).displacement.empty());
  response.set_layer_order({1, 0});
  const Frame f = respond(response, mesh, mesh.rest_positions, 1.0);
  ASSERT_FALSE(f.displacement.empty());
  EXPECT_EQ(f.stats.wrong_side_vertices, mesh.vertex_count());
  for (Index v = mesh.piece_vertex_begin[1]; v < mesh.vertex_count(); ++v) {
    EXPECT_LT(f.displacement.delta[v].z(), 0.0);
  }
  response.set_layer_order({0, 0});
  EXPECT_THROW(respond(response, mesh, mesh.rest_positions, 1.0), std::invalid_argument);
}

}  // namespace
}  // namespace untangle

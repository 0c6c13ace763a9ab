// Ye et al. 2017 response: a strip poking through a sheet gives a boundary contour whose cut-off
// tip (the smaller region) is pulled back near one end within 3 rings, fading, while the larger
// region stays; creases get H = h0 D / |D|, loops ICM's h0 D / sqrt(|D|^2 + g0^2).
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "untangle/bvh.hpp"
#include "untangle/contours.hpp"
#include "untangle/narrow_phase.hpp"
#include "untangle/responses/icm.hpp"
#include "untangle/responses/ye.hpp"

namespace untangle {
namespace {

constexpr double kSpacing = 0.1;
constexpr int kStripColumns = 7;
constexpr int kStripRows = 8;

// Piece 0: a 12 x 12 sheet in z = 0. Piece 1: a vertical strip in the plane y = 0.437, 7 columns
// wide, rows at z = -0.555 + 0.1 j: rows 6 and 7 (14 vertices) poke above the sheet, rows 0-5
// (42 vertices) are below it. Offsets keep every hit off vertices and edges.
struct StripThroughSheet {
  ClothMesh mesh;
  Positions x;
  std::vector<double> inverse_mass;
  std::unique_ptr<Bvh> bvh;
  Intersections intersections;
  Contours contours;
  Index strip_begin = 0;

  // taper > 0 narrows the strip towards its tip (row j is 1 - taper * j as wide), so that
  // moving it changes the contour's length.
  explicit StripThroughSheet(double taper = 0) {
    const auto strip_corner = [taper](int i, int j) {
      return Vec3(0.613 + (i - 3) * kSpacing * (1 - taper * j), 0.437, -0.555 + j * kSpacing);
    };
    const std::vector<PolygonMesh> pieces{
        quad_grid(12, 12, [](int i, int j) { return Vec3(i * kSpacing, j * kSpacing, 0); }),
        quad_grid(kStripColumns, kStripRows, strip_corner)};
    mesh = ClothMesh::build(pieces);
    x = mesh.rest_positions;
    inverse_mass.assign(mesh.vertex_count(), 1.0);
    strip_begin = mesh.piece_vertex_begin[1];
    detect();
  }
  void detect() {
    bvh = std::make_unique<Bvh>(mesh, x);
    bvh->refit(x);
    intersections = find_intersections(mesh, *bvh, x);
    contours = trace_contours(mesh, x, intersections);
  }
  Index strip(int i, int j) const {
    return strip_begin + static_cast<Index>(j * kStripColumns + i);
  }
  Displacement respond(Response& response, const Contours& with, double strength = 1.0) const {
    Settings settings;
    settings.response_strength = strength;
    const ResponseInput input{mesh, x, inverse_mass, intersections, with, settings, kSpacing, *bvh};
    return response.compute(input);
  }
};

// Ring distance over mesh edges from `from`, inside the strip's tip (rows 6 and 7).
std::vector<int> tip_rings(const StripThroughSheet& s, Index from) {
  std::vector<int> distance(s.mesh.vertex_count(), -1);
  std::vector<Index> queue{from};
  distance[from] = 0;
  for (std::size_t head = 0; head < queue.size(); ++head) {
    const Index v = queue[head];
    for (const MeshEdge& e : s.mesh.edges) {
      if (e.vertices[0] != v && e.vertices[1] != v) continue;
      const Index u = e.vertices[0] == v ? e.vertices[1] : e.vertices[0];
      if (u < s.strip(0, 6) || distance[u] >= 0) continue;  // tip vertices only
      distance[u] = distance[v] + 1;
      queue.push_back(u);
    }
  }
  return distance;
}

TEST(Ye, StripThroughSheetGivesOneBoundaryContour) {
  const StripThroughSheet s;
  ASSERT_EQ(s.contours.contours.size(), 1u);
  EXPECT_EQ(s.contours.contours[0].type, ContourType::kBoundary);
}

// The tip (14 vertices) is smaller than the strip's base (42) and the sheet (144): only the tip
// and the sheet's pierced triangles move; the tip down (back through), the sheet up. Every moved
// tip vertex lies within 3 rings of one end of the contour (the strip's left or right border
// column at row 6), with a move that fades with the ring distance; vertices further out stay.
TEST(Ye, BoundaryMovesTheSmallerRegionWithinThreeRings) {
  const StripThroughSheet s;
  ASSERT_EQ(s.contours.contours.size(), 1u);
  YeResponse response;
  const Displacement d = s.respond(response, s.contours);
  ASSERT_EQ(d.delta.size(), s.mesh.vertex_count());
  const double h0 = kSpacing;

  for (int j = 0; j < 6; ++j) {
    for (int i = 0; i < kStripColumns; ++i) {
      EXPECT_EQ(d.delta[s.strip(i, j)], Vec3::Zero()) << "larger region moved at " << i << "," << j;
    }
  }
  std::set<Index> moved;
  for (int j = 6; j < kStripRows; ++j) {
    for (int i = 0; i < kStripColumns; ++i) {
      const Vec3& delta = d.delta[s.strip(i, j)];
      if (delta.isZero()) continue;
      moved.insert(s.strip(i, j));
      EXPECT_LT(delta.z(), 0.0) << "tip vertex " << i << "," << j << " not pulled back";
      EXPECT_LE(delta.norm(), h0 + 1e-12);
    }
  }
  ASSERT_FALSE(moved.empty());
  bool within_one_end = false;
  for (int end_column : {0, kStripColumns - 1}) {
    const std::vector<int> ring = tip_rings(s, s.strip(end_column, 6));
    bool all_within = true;
    for (Index v : moved) all_within = all_within && ring[v] >= 0 && ring[v] <= 3;
    if (!all_within) continue;
    within_one_end = true;
    for (Index v : moved) {
      for (Index u : moved) {
        if (ring[u] > ring[v]) {
          EXPECT_LT(d.delta[u].norm(), d.delta[v].norm()) << "no fade from ring " << ring[v];
        }
      }
    }
    // The vertices of the tip beyond 3 rings stay.
    for (int j = 6; j < kStripRows; ++j) {
      for (int i = 0; i < kStripColumns; ++i) {
        if (ring[s.strip(i, j)] > 3) {
          EXPECT_EQ(d.delta[s.strip(i, j)], Vec3::Zero());
        }
      }
    }
  }
  EXPECT_TRUE(within_one_end) << "moved tip vertices are not within 3 rings of one end";

  bool sheet_pushed_up = false;
  for (Index v = 0; v < s.strip_begin; ++v) {
    EXPECT_GE(d.delta[v].z(), 0.0) << "sheet vertex " << v << " pushed towards the tip";
    sheet_pushed_up = sheet_pushed_up || d.delta[v].z() > 0;
  }
  EXPECT_TRUE(sheet_pushed_up);
}

// Repeated frames of the boundary response alone (no solver) pull the tip back through: the
// contour disappears.
TEST(Ye, BoundaryResponseUntanglesTheStrip) {
  StripThroughSheet s;
  YeResponse response;
  for (int frame = 0; frame < 60 && !s.intersections.pairs.empty(); ++frame) {
    const Displacement d = s.respond(response, s.contours, 0.2);
    for (std::size_t v = 0; v < s.x.size(); ++v) s.x[v] += d.delta[v];
    s.detect();
  }
  EXPECT_TRUE(s.intersections.pairs.empty());
}

// The same contour (on a tapered strip, where D is not 0) typed as a crease and as a loop: both
// push along ICM's D, the crease with |H| = h0 and the loop with h0 |D| / sqrt(|D|^2 + g0^2), so
// every particle's displacement differs exactly by the ratio sqrt(|D|^2 + g0^2) / |D|.
TEST(Ye, CreaseScalingIsH0DOverNormD) {
  const StripThroughSheet s(0.05);
  ASSERT_EQ(s.contours.contours.size(), 1u);
  Contours crease = s.contours, loop = s.contours;
  crease.contours[0].type = ContourType::kCrease;
  loop.contours[0].type = ContourType::kLoop;
  YeResponse response;
  const Displacement dc = s.respond(response, crease, 0.5);
  const Displacement dl = s.respond(response, loop, 0.5);
  const IcmOptions icm;
  const Vec3 d =
      contour_gradient(s.mesh, s.x, s.intersections, s.contours.contours[0], icm.normal_term);
  ASSERT_GT(d.norm(), 0.0);
  const double ratio = std::sqrt(d.squaredNorm() + icm.g0 * icm.g0) / d.norm();
  bool any = false;
  for (std::size_t v = 0; v < s.x.size(); ++v) {
    EXPECT_NEAR((dc.delta[v] - ratio * dl.delta[v]).norm(), 0.0, 1e-12) << "vertex " << v;
    any = any || !dc.delta[v].isZero();
  }
  EXPECT_TRUE(any);
  // The loop is ICM's: the same displacement as IcmResponse on its first frame.
  IcmResponse icm_response;
  const Displacement di = s.respond(icm_response, loop, 0.5);
  for (std::size_t v = 0; v < s.x.size(); ++v) {
    EXPECT_NEAR((dl.delta[v] - di.delta[v]).norm(), 0.0, 1e-12) << "vertex " << v;
  }
}

}  // namespace
}  // namespace untangle

// Shared by the untangler tests (test_untangler*.cpp, test_untangle_sequence.cpp): an all-pairs
// crossing count and the strain over polygon edges, both independent of the engine's detector
// and solver, the hand-built tangles they run on, and what a resolved untangle must show.
// Header-only.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <vector>

#include "untangle/untangler.hpp"

namespace untangle::test::untangler {

// Independent of the detector: orientation signs instead of Moller-Trumbore, all pairs.
inline double orient(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
  return (b - a).cross(c - a).dot(d - a);
}

// A transversal crossing: the segment's ends strictly on both sides of the triangle's plane and
// the segment strictly inside its three edges. Signs within a relative tolerance count as zero,
// so coplanar neighbours (flat cloth) and crossings through an edge are not hits.
inline bool segment_crosses_triangle(const Vec3& p, const Vec3& q, const Vec3& a, const Vec3& b,
                                     const Vec3& c) {
  const double scale = std::pow((b - a).norm() + (c - a).norm() + (q - p).norm(), 3);
  const double eps = 1e-9 * scale;
  const double dp = orient(a, b, c, p), dq = orient(a, b, c, q);
  if (!((dp > eps && dq < -eps) || (dp < -eps && dq > eps))) return false;
  const double s1 = orient(p, q, a, b), s2 = orient(p, q, b, c), s3 = orient(p, q, c, a);
  return (s1 > eps && s2 > eps && s3 > eps) || (s1 < -eps && s2 < -eps && s3 < -eps);
}

inline std::size_t brute_force_pairs(const ClothMesh& mesh, const Positions& x) {
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
inline double strain_against(const ClothMesh& mesh, const Positions& reference,
                             const Positions& x) {
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
inline PolygonMesh folded_ridge(double ridge_x = 0.75, double height = 0.09) {
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
inline std::vector<PolygonMesh> corner_through_sheet() {
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
inline std::vector<PolygonMesh> tilted_sheet_through_flat_one() {
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

inline UntangleOptions default_options() {
  UntangleOptions options;
  options.settings.threads = 2;
  return options;
}

inline void expect_resolved(const Case& c, const UntangleReport& report, const Positions& output) {
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

}  // namespace untangle::test::untangler

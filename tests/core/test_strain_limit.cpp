// Strain limit: after StrainLimit::finish every polygon side of a randomly stretched and
// squashed sheet is within the limit (up to the tolerance of 1e-4), while the quad diagonals,
// which it does not hold, may stay as short as a crushed quad leaves them; a pinned particle does
// not move; one and two threads give the same positions. Checked on the edges of the grid
// itself, not on the concept's own edge list.
#include <gtest/gtest.h>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "support/crumpled_mesh.hpp"
#include "untangle/strain_limit.hpp"

namespace untangle {
namespace {

constexpr int kQuads = 16, kSide = kQuads + 1;
constexpr double kSpacing = 0.1, kLimit = 0.05;

Positions limited(const ClothMesh& mesh, const std::vector<double>& w, const Positions& start,
                  int threads) {
  StrainLimit strain_limit(mesh);
  Positions x = start;
  const int previous_threads = omp_get_max_threads();
  omp_set_num_threads(threads);
#pragma omp parallel
  strain_limit.project(w, kLimit, x);
  strain_limit.finish(w, kLimit, x, true);
  omp_set_num_threads(previous_threads);
  return x;
}

TEST(StrainLimit, EveryPolygonSideEndsWithinTheLimitAndTheDiagonalsAreLeft) {
  const std::vector<PolygonMesh> pieces{test::grid(kQuads, kQuads, kSpacing)};
  const ClothMesh mesh = ClothMesh::build(pieces);
  // Stretched by 10 % along x and noised by up to a fifth of the spacing.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> noise(-kSpacing / 5, kSpacing / 5);
  Positions start = pieces[0].positions;
  for (Vec3& p : start) p = Vec3(1.1 * p.x() + noise(rng), p.y() + noise(rng), noise(rng));
  std::vector<double> w(start.size(), 1.0);
  w[0] = 0;  // one corner is pinned
  const Positions x = limited(mesh, w, start, 1);

  auto strain = [&](const Positions& p, int u, int v) {
    const double rest = (pieces[0].positions[u] - pieces[0].positions[v]).norm();
    return std::abs((p[u] - p[v]).norm() / rest - 1);
  };
  double worst_side = 0, worst_side_before = 0;
  for (int j = 0; j < kSide; ++j) {
    for (int i = 0; i < kSide; ++i) {
      const int v = i + j * kSide;
      if (i + 1 < kSide) {
        worst_side = std::max(worst_side, strain(x, v, v + 1));
        worst_side_before = std::max(worst_side_before, strain(start, v, v + 1));
      }
      if (j + 1 < kSide) {
        worst_side = std::max(worst_side, strain(x, v, v + kSide));
        worst_side_before = std::max(worst_side_before, strain(start, v, v + kSide));
      }
    }
  }
  EXPECT_GT(worst_side_before, 0.2);
  EXPECT_LE(worst_side, kLimit + 1e-4);
  EXPECT_EQ(x[0], start[0]);
  EXPECT_EQ(x, limited(mesh, w, start, 2));
}

TEST(StrainLimit, ACrushedQuadsDiagonalIsNotPulledBackToItsLength) {
  // One unit quad folded flat onto itself: corners 0 and 2, 1 and 3 a thousandth apart, so both
  // diagonals (whichever splits the quad) are almost 0 long while the sides keep their length.
  PolygonMesh quad;
  quad.positions = {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(1, 1, 0), Vec3(0, 1, 0)};
  quad.face_sizes = {4};
  quad.face_indices = {0, 1, 2, 3};
  const std::vector<PolygonMesh> pieces{quad};
  const ClothMesh mesh = ClothMesh::build(pieces);
  ASSERT_EQ(std::count_if(mesh.edges.begin(), mesh.edges.end(),
                          [&](const MeshEdge& e) { return mesh.edge_is_diagonal(e); }),
            1);
  const Positions start = {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 0, 1e-3), Vec3(1, 0, 1e-3)};
  Positions x = start;
  StrainLimit strain_limit(mesh);
  strain_limit.finish(std::vector<double>(4, 1.0), kLimit, x, false);
  EXPECT_EQ(x, start);
}

}  // namespace
}  // namespace untangle

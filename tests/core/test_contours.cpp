// Contours: segments joined into loops and border-ended paths, with their type, length and
// sides, on hand-computed configurations and as graph invariants on crumpled meshes.
#include "untangle/contours.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <map>
#include <numbers>

#include "support/crumpled_mesh.hpp"

namespace untangle {
namespace {

struct Detected {
  ClothMesh mesh;
  Positions x;
  Intersections found;
  Contours contours;
};

Detected detect(const std::vector<PolygonMesh>& pieces) {
  Detected d{ClothMesh::build(pieces), test::concatenated_positions(pieces), {}, {}};
  const Bvh bvh(d.mesh, d.x);
  d.found = find_intersections(d.mesh, bvh, d.x);
  d.contours = trace_contours(d.mesh, d.x, d.found);
  return d;
}

void expect_same_contour(const Contour& a, const Contour& b) {
  EXPECT_EQ(a.segments, b.segments);
  EXPECT_EQ(a.hits, b.hits);
  EXPECT_EQ(a.side0_triangles, b.side0_triangles);
  EXPECT_EQ(a.hit_edge_on_side0, b.hit_edge_on_side0);
  EXPECT_EQ(a.closed, b.closed);
  EXPECT_EQ(a.type, b.type);
  EXPECT_EQ(a.length, b.length);
  EXPECT_EQ(a.pieces, b.pieces);
}

PolygonMesh triangles(const Positions& p, const std::vector<std::array<Index, 3>>& faces) {
  PolygonMesh m;
  m.positions = p;
  for (const auto& f : faces) {
    m.face_sizes.push_back(3);
    m.face_indices.insert(m.face_indices.end(), f.begin(), f.end());
  }
  return m;
}

// Square A: [0,1]^2 at z = 0, diagonal (0,0)-(1,1). Square B: the plane y = 0.5,
// x in [0.3, 1.3], z in [-0.5, 0.5], diagonal from (0.3, -0.5) to (1.3, 0.5). They cross along
// y = 0.5, z = 0 for x in [0.3, 1]: length 0.7. The hits, by hand: B's left border edge at
// x = 0.3, A's diagonal at x = 0.5, B's diagonal at x = 0.8, A's right border edge at x = 1.
std::vector<PolygonMesh> crossing_squares() {
  return {triangles({{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}}, {{0, 1, 2}, {0, 2, 3}}),
          triangles({{0.3, 0.5, -0.5}, {1.3, 0.5, -0.5}, {1.3, 0.5, 0.5}, {0.3, 0.5, 0.5}},
                    {{0, 1, 2}, {0, 2, 3}})};
}

TEST(Contours, CrossingSquaresGiveOneBoundaryPathOfKnownLength) {
  const Detected d = detect(crossing_squares());
  ASSERT_EQ(d.found.hits.size(), 4u);
  ASSERT_EQ(d.contours.contours.size(), 1u);
  const Contour& c = d.contours.contours[0];
  EXPECT_FALSE(c.closed);
  EXPECT_EQ(c.type, ContourType::kBoundary);
  EXPECT_EQ(c.segments.size(), 3u);
  ASSERT_EQ(c.hits.size(), 4u);
  EXPECT_NEAR(c.length, 0.7, 1e-12);
  // Walking order along x (one way or the other), through the hand-computed points.
  std::vector<double> xs;
  for (Index h : c.hits) xs.push_back(d.found.hits[h].point.x());
  if (xs.front() > xs.back()) std::reverse(xs.begin(), xs.end());
  const std::vector<double> expected = {0.3, 0.5, 0.8, 1.0};
  for (std::size_t k = 0; k < 4; ++k) EXPECT_NEAR(xs[k], expected[k], 1e-12);
  // Both ends are on border edges.
  EXPECT_TRUE(d.mesh.edge_is_border[d.found.hits[c.hits.front()].edge]);
  EXPECT_TRUE(d.mesh.edge_is_border[d.found.hits[c.hits.back()].edge]);
  // Sides: two pieces, and every side-0 triangle belongs to the piece of side 0.
  EXPECT_NE(c.pieces[0], c.pieces[1]);
  for (Index t : c.side0_triangles) EXPECT_EQ(d.mesh.triangle_piece[t], c.pieces[0]);
  // A hit's edge is on side 0 exactly when its triangle is not: its edge's piece decides.
  for (std::size_t k = 0; k < c.hits.size(); ++k) {
    const Hit& h = d.found.hits[c.hits[k]];
    const Index edge_piece = d.mesh.triangle_piece[d.mesh.edges[h.edge].triangles[0]];
    EXPECT_EQ(c.hit_edge_on_side0[k] != 0, edge_piece == c.pieces[0]);
  }
  EXPECT_EQ(d.contours.count_by_type[1], 1u);
}

// A dome z = 0.1 - r^2 on a small sheet pokes through a flat sheet at z = 0: the crossing is
// the circle r = sqrt(0.1), inside both sheets, so one closed loop; its polyline length is
// within the chord error of 2 pi r.
TEST(Contours, SheetPokingThroughGivesOneClosedLoop) {
  PolygonMesh large = test::grid(20, 20, 0.1, Vec3(-1.003, -0.997, 0));
  PolygonMesh dome = test::grid(16, 16, 0.05, Vec3(-0.4013, -0.3991, 0));
  for (Vec3& p : dome.positions) p.z() = 0.1 - (p.x() * p.x() + p.y() * p.y());
  const Detected d = detect({large, dome});
  ASSERT_EQ(d.contours.contours.size(), 1u);
  const Contour& c = d.contours.contours[0];
  EXPECT_TRUE(c.closed);
  EXPECT_EQ(c.type, ContourType::kLoop);
  EXPECT_EQ(c.hits.size(), c.segments.size());
  EXPECT_EQ(c.segments.size(), d.found.segments.size());
  const double radius = std::sqrt(0.1);
  EXPECT_NEAR(c.length, 2 * std::numbers::pi * radius, 0.02 * 2 * std::numbers::pi * radius);
  EXPECT_LT(c.length, 2 * std::numbers::pi * radius);  // a polygon inscribed in the circle
  for (Index h : c.hits) {
    const Vec3& p = d.found.hits[h].point;
    EXPECT_NEAR(std::hypot(p.x(), p.y()), radius, 0.01);
  }
  EXPECT_EQ(d.contours.count_by_type[0], 1u);
}

// The tangled start in miniature: one sheet, its lower part folded back behind the upper part
// (2 r behind, bent around a half circle), with a ridge across the folded part that pokes
// through the upper part. The ridge crosses the plane z = 0 along two straight lines, each
// running from the folded part's shifted border edge to the upper part's border edge: two
// boundary contours, each as long as the x overlap of the two layers.
TEST(Contours, RidgeFoldedThroughGivesTwoBoundaryContours) {
  const int nx = 20, ny = 40;
  const double h = 0.1, r = 0.05, shift = 0.03;
  PolygonMesh sheet = test::grid(nx, ny, h);
  const double fold_y = 20 * h;  // rows above stay flat; rows below go around the fold
  const double arc = std::numbers::pi * r;
  for (Vec3& p : sheet.positions) {
    const double s = fold_y - p.y();  // distance along the sheet below the fold line
    if (s <= 0) continue;
    if (s < arc) {
      const double a = s / r;
      p = Vec3(p.x(), fold_y - r * std::sin(a), -r + r * std::cos(a));
    } else {
      const double back = s - arc;  // running back up behind the upper part
      const double y = fold_y + back + 0.0137;
      const double ridge = 0.2 * std::exp(-std::pow((y - 3.0) / 0.2, 2));
      p = Vec3(p.x() + shift * std::min(1.0, back / h), y, -2 * r + ridge);
    }
  }
  const Detected d = detect({sheet});
  ASSERT_EQ(d.contours.contours.size(), 2u);
  const double overlap = nx * h - shift;
  for (const Contour& c : d.contours.contours) {
    EXPECT_FALSE(c.closed);
    EXPECT_EQ(c.type, ContourType::kBoundary);
    EXPECT_NEAR(c.length, overlap, 1e-9);
    EXPECT_EQ(c.pieces[0], c.pieces[1]);
  }
  EXPECT_EQ(d.contours.count_by_type[1], 2u);
}

// Graph invariants on crumpled meshes: every segment in exactly one contour (and
// segment_contour says which), consecutive segments share the hit between them, loops close,
// open paths end at a border edge or at a hit with no other segment. Sides: consecutive
// side-0 triangles are equal or share the hit's edge.
TEST(Contours, InvariantsOnCrumpledMeshes) {
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    test::CrumpleOptions o;
    o.nx = o.ny = 10 + 5 * static_cast<int>(seed);
    o.folds = 1 + static_cast<int>(seed % 3);
    o.seed = seed;
    const int piece_count = seed % 2 ? 1 : 2;
    const Detected d = detect(test::crumpled_pieces(o, piece_count));
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    const auto& segs = d.found.segments;
    const auto& hits = d.found.hits;
    ASSERT_FALSE(segs.empty());
    std::vector<int> seen(segs.size(), 0);
    std::map<Index, int> degree;
    for (const Segment& s : segs) {
      ++degree[s.hits[0]];
      ++degree[s.hits[1]];
    }
    std::size_t types[3] = {0, 0, 0};
    Index previous_smallest = 0;
    for (std::size_t ci = 0; ci < d.contours.contours.size(); ++ci) {
      const Contour& c = d.contours.contours[ci];
      const std::size_t n = c.segments.size();
      ASSERT_GT(n, 0u);
      ASSERT_EQ(c.hits.size(), c.closed ? n : n + 1);
      ASSERT_EQ(c.side0_triangles.size(), n);
      ASSERT_EQ(c.hit_edge_on_side0.size(), c.hits.size());
      ++types[static_cast<int>(c.type)];
      const Index smallest = *std::min_element(c.segments.begin(), c.segments.end());
      if (ci > 0) {
        EXPECT_GT(smallest, previous_smallest);
      }
      previous_smallest = smallest;
      for (std::size_t i = 0; i < n; ++i) {
        const Index s = c.segments[i];
        ++seen[s];
        EXPECT_EQ(d.contours.segment_contour[s], ci);
        const Index h0 = c.hits[i], h1 = c.hits[(i + 1) % c.hits.size()];
        const bool joins = (segs[s].hits[0] == h0 && segs[s].hits[1] == h1) ||
                           (segs[s].hits[0] == h1 && segs[s].hits[1] == h0);
        EXPECT_TRUE(joins);
        const Index t0 = c.side0_triangles[i];
        EXPECT_TRUE(t0 == segs[s].triangles[0] || t0 == segs[s].triangles[1]);
        EXPECT_EQ(d.mesh.triangle_piece[t0], c.pieces[0]);
      }
      double length = 0;
      for (std::size_t k = 0; k < n; ++k) {
        length += (hits[c.hits[(k + 1) % c.hits.size()]].point - hits[c.hits[k]].point).norm();
      }
      EXPECT_NEAR(c.length, length, 1e-9 * (1 + length));
      if (c.closed) {
        EXPECT_EQ(c.type, ContourType::kLoop);
      } else {
        for (Index end : {c.hits.front(), c.hits.back()}) {
          const bool border = d.mesh.edge_is_border[hits[end].edge] != 0;
          EXPECT_TRUE(border || degree[end] == 1 || degree[end] > 2);
        }
        const bool border_end = d.mesh.edge_is_border[hits[c.hits.front()].edge] ||
                                d.mesh.edge_is_border[hits[c.hits.back()].edge];
        EXPECT_EQ(c.type, border_end ? ContourType::kBoundary : ContourType::kCrease);
      }
    }
    for (int count : seen) EXPECT_EQ(count, 1);
    for (int k = 0; k < 3; ++k) EXPECT_EQ(d.contours.count_by_type[k], types[k]);
  }
}

// Same contours, in the same order, for 1 and 2 threads.
TEST(Contours, IdenticalForOneAndTwoThreads) {
  test::CrumpleOptions o;
  o.nx = o.ny = 60;
  o.folds = 3;
  o.seed = 77;
  const auto pieces = test::crumpled_pieces(o, 2);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const Detected one = detect(pieces);
  omp_set_num_threads(2);
  const Detected two = detect(pieces);
  omp_set_num_threads(saved);
  ASSERT_FALSE(one.contours.contours.empty());
  ASSERT_EQ(one.contours.contours.size(), two.contours.contours.size());
  for (std::size_t i = 0; i < one.contours.contours.size(); ++i) {
    expect_same_contour(one.contours.contours[i], two.contours.contours[i]);
  }
}

// Contours written over those of a frame with more of them equal freshly traced ones.
TEST(Contours, WrittenOverOlderContoursEqualFreshOnes) {
  test::CrumpleOptions o;
  o.nx = o.ny = 40;
  o.folds = 3;
  o.seed = 78;
  const Detected heavy = detect({test::crumpled_grid(o)});
  o.folds = 1;
  const Detected light = detect({test::crumpled_grid(o)});
  ASSERT_LT(light.contours.contours.size(), heavy.contours.contours.size());
  ASSERT_FALSE(light.contours.contours.empty());
  Contours over = heavy.contours;
  trace_contours(light.mesh, light.x, light.found, over);
  const Contours& fresh = light.contours;
  EXPECT_EQ(over.count_by_type, fresh.count_by_type);
  EXPECT_EQ(over.segment_contour, fresh.segment_contour);
  ASSERT_EQ(over.contours.size(), fresh.contours.size());
  for (std::size_t i = 0; i < fresh.contours.size(); ++i) {
    expect_same_contour(over.contours[i], fresh.contours[i]);
  }
}

TEST(Contours, NoIntersectionsGiveNoContours) {
  const Detected d = detect({test::grid(10, 10)});
  EXPECT_TRUE(d.contours.contours.empty());
  EXPECT_EQ(d.contours.count_by_type, (std::array<std::size_t, 3>{0, 0, 0}));
}

}  // namespace
}  // namespace untangle

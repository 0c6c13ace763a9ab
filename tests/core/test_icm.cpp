// ICM response: the hit gradient against the derivative of the local contour length (finite
// differences) and hand-computed values, the contour sum and its side signs on a triangle poking
// through a sheet (contour length known in closed form), the inverse-mass spreading, pins,
// the off switch, the dead-end count and thread-count independence.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>

#include "untangle/bvh.hpp"
#include "untangle/contours.hpp"
#include "untangle/narrow_phase.hpp"
#include "untangle/responses/icm.hpp"

namespace untangle {
namespace {

PolygonMesh triangles_piece(const Positions& positions, std::vector<std::array<Index, 3>> faces) {
  PolygonMesh piece;
  piece.positions = positions;
  for (const auto& f : faces) {
    piece.face_sizes.push_back(3);
    piece.face_indices.insert(piece.face_indices.end(), f.begin(), f.end());
  }
  return piece;
}

Index find_edge(const ClothMesh& mesh, Index a, Index b) {
  for (Index e = 0; e < mesh.edges.size(); ++e) {
    const auto& v = mesh.edges[e].vertices;
    if ((v[0] == a && v[1] == b) || (v[0] == b && v[1] == a)) return e;
  }
  return kNoIndex;
}

// Where segment p-q crosses the plane z = 0 (the pierced sheet of these tests).
Vec3 cross_z0(const Vec3& p, const Vec3& q) {
  const double s = p.z() / (p.z() - q.z());
  return p + s * (q - p);
}

// The hit of edge (a, b) with the triangle t lying in z = 0, filled in by hand.
Hit hit_on_z0(const ClothMesh& mesh, const Positions& x, Index a, Index b, Index t) {
  Hit hit;
  hit.edge = find_edge(mesh, a, b);
  hit.triangle = t;
  const auto& v = mesh.edges[hit.edge].vertices;
  hit.point = cross_z0(x[v[0]], x[v[1]]);
  hit.t = (hit.point - x[v[0]]).norm() / (x[v[1]] - x[v[0]]).norm();
  const auto& c = mesh.triangles[t];
  // Barycentrics in the plane z = 0 from 2D signed areas.
  auto area = [](const Vec3& p, const Vec3& q, const Vec3& r) {
    return (q.x() - p.x()) * (r.y() - p.y()) - (r.x() - p.x()) * (q.y() - p.y());
  };
  const double total = area(x[c[0]], x[c[1]], x[c[2]]);
  hit.barycentric =
      Vec3(area(hit.point, x[c[1]], x[c[2]]) / total, area(x[c[0]], hit.point, x[c[2]]) / total,
           area(x[c[0]], x[c[1]], hit.point) / total);
  return hit;
}

// An edge a-b with its two triangles (a, b, c1) and (b, a, c2), crossing the sheet z = 0.
struct CrossingEdge {
  Positions x{Vec3(-0.2, 0.1, -1), Vec3(0.3, -0.1, 1), Vec3(1, 0.4, 0.3), Vec3(-0.8, 0.6, -0.4),
              Vec3(-3, -3, 0),     Vec3(3, -3, 0),     Vec3(0, 3, 0)};
  ClothMesh mesh;
  Hit hit;
  explicit CrossingEdge(bool flip_sheet = false) {
    std::vector<PolygonMesh> pieces{
        triangles_piece({x[0], x[1], x[2], x[3]}, {{0, 1, 2}, {1, 0, 3}}),
        triangles_piece({x[4], x[5], x[6]}, {flip_sheet ? std::array<Index, 3>{0, 2, 1}
                                                        : std::array<Index, 3>{0, 1, 2}})};
    mesh = ClothMesh::build(pieces);
    hit = hit_on_z0(mesh, x, 0, 1, 2);
  }
  // The local contour: from the hit point to where each triangle's other side crosses z = 0.
  Vec3 far_end(int i) const {
    const Vec3& c = x[i == 0 ? 2 : 3];
    // The other side of T_i that crosses z = 0 joins c to whichever edge end lies across.
    return c.z() * x[0].z() < 0 ? cross_z0(c, x[0]) : cross_z0(c, x[1]);
  }
};

TEST(IcmGradient, VolinoGradientIsTheDescentOfTheLocalContourLength) {
  // With the contour's far ends Q_i held, moving the edge by d moves its hit point P(d) in the
  // sheet; L(d) = |Q_1 - P(d)| + |Q_2 - P(d)|. Volino's gradient (normal term 1) is -dL/dd.
  const CrossingEdge c;
  const Vec3 q1 = c.far_end(0), q2 = c.far_end(1);
  auto length = [&](const Vec3& d) {
    const Vec3 p = cross_z0(c.x[0] + d, c.x[1] + d);
    return (q1 - p).norm() + (q2 - p).norm();
  };
  Vec3 numeric;
  const double h = 1e-6;
  for (int k = 0; k < 3; ++k) {
    Vec3 d = Vec3::Zero();
    d[k] = h;
    numeric[k] = -(length(d) - length(-d)) / (2 * h);
  }
  const Vec3 g = hit_gradient(c.mesh, c.x, c.hit, 1.0);
  EXPECT_GT(numeric.norm(), 0.1);
  EXPECT_NEAR((g - numeric).norm(), 0, 1e-6) << g.transpose() << " vs " << numeric.transpose();
}

TEST(IcmGradient, RefinedGradientMatchesTheHandFormula) {
  // G = sum_i R_i - 2 (E.R_i)/(E.N) N with R_i = (Q_i - P) / |Q_i - P|, N = (0, 0, 1).
  const CrossingEdge c;
  const Vec3 p = c.hit.point;
  const Vec3 e = c.x[1] - c.x[0];
  const Vec3 n(0, 0, 1);
  Vec3 expected = Vec3::Zero();
  for (int i = 0; i < 2; ++i) {
    const Vec3 r = (c.far_end(i) - p).normalized();
    expected += r - 2 * e.dot(r) / e.dot(n) * n;
  }
  EXPECT_NEAR((hit_gradient(c.mesh, c.x, c.hit, 2.0) - expected).norm(), 0, 1e-12);
}

TEST(IcmGradient, DoesNotDependOnTheSheetsWinding) {
  // The gradient is geometric: reversing the pierced triangle's normal must not change it.
  const CrossingEdge c, flipped(true);
  EXPECT_NEAR((hit_gradient(c.mesh, c.x, c.hit, 2.0) -
               hit_gradient(flipped.mesh, flipped.x, flipped.hit, 2.0))
                  .norm(),
              0, 1e-12);
}

TEST(IcmGradient, GrazingEdgeGivesNoGradient) {
  // An edge almost in the sheet's plane: |E.N| tiny, G = 0 instead of a huge normal term.
  CrossingEdge c;
  c.x[0] = Vec3(-1, 0.1, -1e-7);
  c.x[1] = Vec3(1, -0.1, 1e-7);
  c.hit = hit_on_z0(c.mesh, c.x, 0, 1, 2);
  EXPECT_EQ(hit_gradient(c.mesh, c.x, c.hit, 2.0), Vec3::Zero());
}

// A triangle u0 u1 u2 in the plane y = 0 poking up through a sheet triangle in z = 0: both of
// its upper edges cross the sheet. The contour's length is the triangle's width at the sheet,
// w = (1 - s) / 2 when the triangle is lowered by s, so dL/d(lowering) = -1/2 and Volino's
// D (side 0 = the poking triangle) is (0, 0, -1/2); the refined one doubles the normal term.
struct Tent {
  Positions x{Vec3(-0.5, 0, -1), Vec3(0.5, 0, -1), Vec3(0, 0, 1),   // poking triangle
              Vec3(-3, -3, 0),   Vec3(3, -3, 0),   Vec3(0, 3, 0)};  // sheet
  std::vector<double> inverse_mass = std::vector<double>(6, 1.0);
  ClothMesh mesh;
  Intersections intersections;
  Contours contours;
  explicit Tent(bool tent_on_side0 = true) {
    std::vector<PolygonMesh> pieces{triangles_piece({x[0], x[1], x[2]}, {{0, 1, 2}}),
                                    triangles_piece({x[3], x[4], x[5]}, {{0, 1, 2}})};
    mesh = ClothMesh::build(pieces);
    Hit left = hit_on_z0(mesh, x, 0, 2, 1), right = hit_on_z0(mesh, x, 1, 2, 1);
    if (left.edge > right.edge) std::swap(left, right);
    intersections.hits = {left, right};
    intersections.segments = {Segment{{0, 1}, {0, 1}}};
    intersections.pairs = {{0, 1}};
    Contour contour;
    contour.segments = {0};
    contour.hits = {0, 1};
    contour.side0_triangles = {tent_on_side0 ? Index(0) : Index(1)};
    contour.hit_edge_on_side0 = {std::uint8_t(tent_on_side0), std::uint8_t(tent_on_side0)};
    contour.closed = false;
    contour.type = ContourType::kBoundary;
    contour.length = 0.5;
    contour.pieces = tent_on_side0 ? std::array<Index, 2>{0, 1} : std::array<Index, 2>{1, 0};
    contours.contours = {contour};
    contours.count_by_type = {0, 1, 0};
    contours.segment_contour = {0};
  }
  Displacement respond(IcmResponse& response, const Settings& settings) const {
    const Bvh bvh(mesh, x);
    const ResponseInput input{mesh, x, inverse_mass, intersections, contours, settings, 1.0, bvh};
    return response.compute(input);
  }
};

TEST(IcmContour, TentGradientMatchesTheClosedFormLengthDerivative) {
  const Tent tent;
  const Contour& contour = tent.contours.contours[0];
  const Vec3 volino = contour_gradient(tent.mesh, tent.x, tent.intersections, contour, 1.0);
  EXPECT_NEAR((volino - Vec3(0, 0, -0.5)).norm(), 0, 1e-12) << volino.transpose();
  const Vec3 refined = contour_gradient(tent.mesh, tent.x, tent.intersections, contour, 2.0);
  EXPECT_NEAR((refined - Vec3(0, 0, -1.0)).norm(), 0, 1e-12) << refined.transpose();
}

TEST(IcmContour, SwappingTheSidesFlipsD) {
  // D is how side 0 moves relative to side 1: with the sheet as side 0 it points up.
  const Tent swapped(false);
  const Vec3 d = contour_gradient(swapped.mesh, swapped.x, swapped.intersections,
                                  swapped.contours.contours[0], 1.0);
  EXPECT_NEAR((d - Vec3(0, 0, 0.5)).norm(), 0, 1e-12);
}

TEST(IcmResponse, TentMovesDownAndSheetUpByTheScaledGradient) {
  // h0 = strength * spacing = 0.5; D = (0, 0, -1) (refined); H = h0 D / sqrt(|D|^2 + 16).
  // Every hit splits its edge at t = 1/2, so the PBD share of each edge corner is exactly H,
  // and every tent vertex moves by H. The sheet moves the other way.
  Settings settings;
  settings.response_strength = 0.5;
  IcmResponse response;
  for (bool side0 : {true, false}) {
    const Tent tent(side0);
    const Displacement out = tent.respond(response, settings);
    ASSERT_EQ(out.delta.size(), 6u);
    const Vec3 h(0, 0, -0.5 / std::sqrt(1.0 + 16.0));
    for (Index v = 0; v < 3; ++v) EXPECT_NEAR((out.delta[v] - h).norm(), 0, 1e-12) << v;
    for (Index v = 3; v < 6; ++v) {
      EXPECT_GT(out.delta[v].z(), 0) << v;
      EXPECT_NEAR(out.delta[v].head<2>().norm(), 0, 1e-12);
      EXPECT_LE(out.delta[v].norm(), 2 * h.norm() + 1e-12);
    }
    for (Index v = 0; v < 6; ++v) EXPECT_EQ(out.near_contour[v], 1);
  }
}

TEST(IcmResponse, PinnedParticlesNeverMove) {
  // The sheet fully pinned and one tent corner pinned: they get exactly zero; the others move.
  Tent tent;
  tent.inverse_mass = {0, 1, 1, 0, 0, 0};
  IcmResponse response;
  const Displacement out = tent.respond(response, Settings{});
  ASSERT_EQ(out.delta.size(), 6u);
  for (Index v : {0, 3, 4, 5}) EXPECT_EQ(out.delta[v], Vec3::Zero()) << v;
  EXPECT_LT(out.delta[1].z(), 0);
  EXPECT_LT(out.delta[2].z(), 0);
}

TEST(IcmResponse, UntanglingOffGivesNoDisplacement) {
  const Tent tent;
  Settings settings;
  settings.untangle = false;
  IcmResponse response;
  EXPECT_TRUE(tent.respond(response, settings).empty());
}

TEST(IcmResponse, ContourThatNeverShrinksIsReportedStuckAndItsPushFades) {
  // The same contour, unchanged, frame after frame: after stuck_frames it counts as stuck, and
  // after twice that its push has faded to zero.
  const Tent tent;
  IcmOptions options;
  options.stuck_frames = 5;
  IcmResponse response(options);
  const Settings settings;
  std::vector<std::size_t> stuck;
  std::vector<double> push;
  for (int frame = 0; frame < 12; ++frame) {
    const Displacement out = tent.respond(response, settings);
    stuck.push_back(out.stuck_contours);
    push.push_back(out.empty() ? 0.0 : out.delta[2].norm());
  }
  for (int frame = 0; frame < 5; ++frame) EXPECT_EQ(stuck[frame], 0u) << frame;
  for (int frame = 5; frame < 12; ++frame) EXPECT_EQ(stuck[frame], 1u) << frame;
  EXPECT_GT(push[0], 0);
  EXPECT_EQ(push[5], push[0]);
  EXPECT_LT(push[7], push[0]);
  EXPECT_EQ(push[11], 0.0);
}

TEST(IcmSpread, HitPointsMoveByExactlyTheRequestedAmount) {
  // The PBD share moves the edge's point of the hit by +move and the triangle's by -move.
  const CrossingEdge c;
  const std::vector<double> inverse_mass(c.mesh.vertex_count(), 1.0);
  const Vec3 move(0.01, -0.02, 0.03);
  std::vector<ParticlePush> pushes;
  push_hit(c.mesh, inverse_mass, c.hit, move, pushes);
  Positions delta(c.mesh.vertex_count(), Vec3::Zero());
  for (const ParticlePush& p : pushes) delta[p.particle] += p.delta;
  const auto& ev = c.mesh.edges[c.hit.edge].vertices;
  const Vec3 edge_point = (1 - c.hit.t) * delta[ev[0]] + c.hit.t * delta[ev[1]];
  const auto& tv = c.mesh.triangles[c.hit.triangle];
  const Vec3 tri_point = c.hit.barycentric[0] * delta[tv[0]] + c.hit.barycentric[1] * delta[tv[1]] +
                         c.hit.barycentric[2] * delta[tv[2]];
  EXPECT_NEAR((edge_point - move).norm(), 0, 1e-12);
  EXPECT_NEAR((tri_point + move).norm(), 0, 1e-12);
}

TEST(IcmSpread, AverageIsWeightedByClosenessToTheHit) {
  const std::vector<ParticlePush> pushes{
      {1, Vec3(1, 0, 0), 0.25}, {1, Vec3(0, 1, 0), 0.75}, {2, Vec3(0, 0, 2), 0.5}};
  const Positions average = average_pushes(3, pushes);
  EXPECT_EQ(average[0], Vec3::Zero());
  EXPECT_NEAR((average[1] - Vec3(0.25, 0.75, 0)).norm(), 0, 1e-15);
  EXPECT_NEAR((average[2] - Vec3(0, 0, 2)).norm(), 0, 1e-15);
}

// A horizontal grid sheet (piece 0) and `count` vertical grid sheets (pieces 1.., planes
// y = const) whose top edge is a peak, so each pokes up through the horizontal one over a width
// that shrinks as it is lowered: two-sheet crossings with an expected direction.
std::vector<PolygonMesh> peaked_crossing(Index n = 12, Index count = 1) {
  std::vector<PolygonMesh> pieces(1 + count);
  const double step = 2.0 / (n - 1);
  pieces[0] = quad_grid(n, n, [&](Index i, Index j) {
    return Vec3(-1 + i * step + 0.0071, -1 + j * step + 0.0033, 0.0);
  });
  for (Index k = 0; k < count; ++k) {
    const double y = count == 1 ? 0.013 : -0.7 + 1.4 * k / (count - 1) + 0.013;
    pieces[1 + k] = quad_grid(n, n, [&](Index i, Index j) {
      const double x = -0.8 + i * 1.6 / (n - 1);
      const double top = 0.45 - 0.7 * std::abs(x);  // the peak: above z = 0 for |x| < 0.64
      const double z = -0.8 + (top + 0.8) * j / (n - 1);
      return Vec3(x, y, z);
    });
  }
  return pieces;
}

struct Pipeline {
  ClothMesh mesh;
  Positions x;
  std::vector<double> inverse_mass;
  Intersections intersections;
  Contours contours;
  explicit Pipeline(const std::vector<PolygonMesh>& pieces)
      : mesh(ClothMesh::build(pieces)), x(mesh.rest_positions) {
    inverse_mass.assign(mesh.vertex_count(), 1.0);
  }
  Displacement respond(IcmResponse& response, const Settings& settings) {
    Bvh bvh(mesh, x);
    bvh.refit(x);
    intersections = find_intersections(mesh, bvh, x);
    contours = trace_contours(mesh, x, intersections);
    const ResponseInput input{mesh,     x,        inverse_mass,          intersections,
                              contours, settings, mesh.mean_edge_length, bvh};
    return response.compute(input);
  }
};

TEST(IcmResponse, PokingSheetIsPushedBackDownThroughTheOther) {
  // Detected, traced and answered by the real stages: the vertical sheet's displacement points
  // down on average, the horizontal sheet's up (the hand direction of the tent above).
  Pipeline pipeline(peaked_crossing());
  IcmResponse response;
  const Displacement out = pipeline.respond(response, Settings{});
  ASSERT_GT(pipeline.intersections.hits.size(), 0u);
  ASSERT_FALSE(out.empty());
  Vec3 sum[2] = {Vec3::Zero(), Vec3::Zero()};
  for (Index v = 0; v < pipeline.mesh.vertex_count(); ++v) {
    sum[pipeline.mesh.vertex_piece[v]] += out.delta[v];
  }
  EXPECT_EQ(pipeline.contours.contours.size(), 1u);
  EXPECT_GT(sum[0].z(), 0);
  EXPECT_LT(sum[1].z(), 0);
  EXPECT_GT(std::abs(sum[1].z()), 3 * sum[1].head<2>().norm());  // mostly vertical
}

TEST(IcmResponse, SameDisplacementForOneAndTwoThreads) {
  std::vector<Displacement> outs;
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    Pipeline pipeline(peaked_crossing(20, 5));
    IcmResponse response;
    outs.push_back(pipeline.respond(response, Settings{}));
    ASSERT_EQ(pipeline.contours.contours.size(), 5u);
  }
  ASSERT_EQ(outs[0].delta.size(), outs[1].delta.size());
  for (std::size_t v = 0; v < outs[0].delta.size(); ++v) {
    EXPECT_EQ(outs[0].delta[v], outs[1].delta[v]) << v;
  }
  EXPECT_EQ(outs[0].near_contour, outs[1].near_contour);
}

}  // namespace
}  // namespace untangle

// Global intersection analysis: the regions a contour bounds, on hand-built configurations whose
// regions follow from the geometry alone (which vertices lie beyond the other sheet, a fold's
// dip between two pinches), and the thread-count independence of the result.
#include "untangle/gia.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "support/crumpled_mesh.hpp"
#include "support/small_meshes.hpp"

namespace untangle {
namespace {

struct Analysed {
  ClothMesh mesh;
  Positions x;
  Intersections found;
  Contours contours;
  GlobalIntersections gia;
};

Analysed analyse(const std::vector<PolygonMesh>& pieces) {
  Analysed a{ClothMesh::build(pieces), test::concatenated_positions(pieces), {}, {}, {}};
  const Bvh bvh(a.mesh, a.x);
  a.found = find_intersections(a.mesh, bvh, a.x);
  a.contours = trace_contours(a.mesh, a.x, a.found);
  a.gia = analyse_intersections(a.mesh, a.x, a.found, a.contours);
  return a;
}

// The region of `piece` over all contours and sides, as a sorted list of that piece's vertices.
std::vector<Index> region_of_piece(const Analysed& a, Index piece) {
  std::vector<Index> out;
  for (Index v = a.mesh.piece_vertex_begin[piece]; v < a.mesh.piece_vertex_begin[piece + 1]; ++v) {
    if (a.gia.in_region(v)) out.push_back(v);
  }
  return out;
}

// Sheet A: 24 x 24 quads of 0.1 at z = 0 with a smooth bump of height 0.4 in its middle; sheet B:
// a flat 12 x 12 sheet at z = 0.15 over the bump, offset by a third of a quad in x and two thirds
// in y, so that no vertex or diagonal lies on the other's edges or diagonals. The bump pokes
// through B along one closed loop.
std::vector<PolygonMesh> bump_through_sheet() {
  PolygonMesh a = test::grid(24, 24, 0.1);
  for (Vec3& p : a.positions) {
    const double r2 = (p.x() - 1.2) * (p.x() - 1.2) + (p.y() - 1.2) * (p.y() - 1.2);
    p.z() = 0.4 * std::exp(-r2 / 0.09);
  }
  PolygonMesh b = test::grid(12, 12, 0.1, Vec3(0.633, 0.671, 0.15));
  return {a, b};
}

// The height of sheet A's piecewise-linear surface above (x, y): the plane of the triangle of the
// grid that holds it (triangles fan from each quad's first corner, as the mesh splits them).
double height_of_a(const Positions& a, double x, double y) {
  const int i = static_cast<int>(std::floor(x / 0.1)), j = static_cast<int>(std::floor(y / 0.1));
  const double u = x / 0.1 - i, v = y / 0.1 - j;
  auto z = [&](int di, int dj) { return a[(j + dj) * 25 + (i + di)].z(); };
  // Quad (i, j), (i+1, j), (i+1, j+1), (i, j+1) split along (i, j)-(i+1, j+1).
  if (u >= v) return z(0, 0) + u * (z(1, 0) - z(0, 0)) + v * (z(1, 1) - z(1, 0));
  return z(0, 0) + v * (z(0, 1) - z(0, 0)) + u * (z(1, 1) - z(0, 1));
}

TEST(Gia, ABumpThroughASheetBoundsTheCapAndTheDiscInsideTheLoop) {
  const auto pieces = bump_through_sheet();
  const Analysed a = analyse(pieces);
  ASSERT_EQ(a.contours.contours.size(), 1u);
  ASSERT_TRUE(a.contours.contours[0].closed);
  // A: the cap is the vertices above B's plane.
  std::vector<Index> cap;
  for (Index v = 0; v < 625; ++v) {
    if (a.x[v].z() > 0.15) cap.push_back(v);
  }
  // B: the disc is the vertices below A's surface.
  std::vector<Index> disc;
  for (Index v = 625; v < a.mesh.vertex_count(); ++v) {
    if (height_of_a(a.x, a.x[v].x(), a.x[v].y()) > 0.15) disc.push_back(v);
  }
  ASSERT_FALSE(cap.empty());
  ASSERT_FALSE(disc.empty());
  EXPECT_EQ(region_of_piece(a, 0), cap);
  EXPECT_EQ(region_of_piece(a, 1), disc);
  // The cap and the disc are opposite regions of the one contour; the rest of A is in none.
  EXPECT_TRUE(a.gia.opposite(cap[0], disc[0]));
  EXPECT_FALSE(a.gia.opposite(cap[0], cap[1]));
  EXPECT_FALSE(a.gia.opposite(0, disc[0]));
  // The way back for each region points through the other sheet: the cap down, the disc up.
  const ContourRegions& regions = a.gia.contours[0];
  const int cap_side = regions.vertices[0].front() < 625 ? 0 : 1;
  EXPECT_LT(regions.back_through[cap_side].normalized().z(), -0.99);
  EXPECT_GT(regions.back_through[1 - cap_side].normalized().z(), 0.99);
  // Depth, from the crossings on B's plane: the cap reaches to the bump's top (0.4, a vertex),
  // 0.25 beyond B; the flat disc reaches nowhere beyond its own crossings.
  EXPECT_NEAR(regions.depth[cap_side], 0.4 - 0.15, 1e-9);
  EXPECT_NEAR(regions.depth[1 - cap_side], 0.0, 0.02);
}

// A flap: a vertical sheet (x = 0.55, 6 quads wide in y, from z = -0.23 to 0.67) through the
// middle of a flat one at z = 0 that is wider on every side. The flap's border edges end inside
// the flat sheet, so its curve there splits nothing; on the flap, the path from border to border
// cuts off the part below the flat sheet.
TEST(Gia, AFlapThroughASheetBoundsThePartBeyondTheContourOnly) {
  PolygonMesh flat = test::grid(12, 12, 0.1);
  PolygonMesh flap = quad_grid(
      7, 10, [](Index i, Index j) { return Vec3(0.55, 0.33 + 0.1 * i, -0.23 + 0.1 * j); });
  const Analysed a = analyse({flat, flap});
  ASSERT_EQ(a.contours.contours.size(), 1u);
  EXPECT_EQ(a.contours.contours[0].type, ContourType::kBoundary);
  std::vector<Index> beyond;
  for (Index v = 169; v < a.mesh.vertex_count(); ++v) {
    if (a.x[v].z() < 0) beyond.push_back(v);
  }
  EXPECT_EQ(beyond.size(), 21u);  // the three rows below z = 0
  EXPECT_TRUE(region_of_piece(a, 0).empty());
  EXPECT_EQ(region_of_piece(a, 1), beyond);
}

// Two pieces, B wider than A in y: the crossing runs from border to border of A, which it cuts in
// two (its smaller part, x < 0.33, is the region), and ends inside B on both ends (A's borders
// pierce it), which it does not cut. Each side of the contour is one piece.
TEST(Gia, TwoPiecesTheOneCutFromBorderToBorderBoundsItsSmallerPart) {
  PolygonMesh a = test::grid(12, 12, 0.1, Vec3(0, 0, 0));
  PolygonMesh b = quad_grid(8, 15, [](Index i, Index j) {
    return Vec3(0.33, -0.045 + 0.1 * j, -0.21 + 0.1 * i);  // x = 0.33, z in [-0.21, 0.49]
  });
  const Analysed a_ = analyse({a, b});
  ASSERT_EQ(a_.contours.contours.size(), 1u);
  EXPECT_NE(a_.contours.contours[0].pieces[0], a_.contours.contours[0].pieces[1]);
  std::vector<Index> left;
  for (Index v = 0; v < 169; ++v) {
    if (a_.x[v].x() < 0.33) left.push_back(v);
  }
  EXPECT_EQ(left.size(), 4u * 13u);
  EXPECT_EQ(region_of_piece(a_, 0), left);
  EXPECT_TRUE(region_of_piece(a_, 1).empty());
}

// The analysis of a crumpled tangle of many contours does not depend on the number of threads.
// One sheet folded flat along x = 0 (a crease one vertex wide): the lower half at z = 0, the
// upper half over it rising as z = x (0.3 - d(y) (1 - x)), which dips through the lower half
// where d(y) > 0.3, from the crease out to x = 1 - 0.3 / d(y). (The upper half is drawn at 0.93
// of the lower's width and sheared in y, so no vertex or edge of one lies on the other's.) The
// crossing curve reaches the crease at both ends, where a fan of the crease folds through
// itself (a pinch): it is one open contour that splits neither half by itself. Its two paths,
// joined at the pinches, bound the fold between them: the upper half's dip (its vertices below
// z = 0) and the part of the lower half under the dip's (x, y), which go back up and down.
// Without the pinches' closing of the loop, neither side has a region.
constexpr Index kHalf = 10, kFoldRows = 21;

double dip_strength(double y) {
  const double r = (y - 1.037) / 0.6;
  return 0.6 * std::max(0.0, 1 - r * r);
}

// The upper half's height over (x, y) of the lower half, from its formula.
double upper_height(double x, double y) {
  const double u = x / 0.93;
  return u * (0.3 - dip_strength(y - 0.037 * u) * (1 - u));
}

TEST(Gia, AFoldPinchedThroughItselfBoundsTheDipAndTheLayerUnderIt) {
  const PolygonMesh fold = quad_grid(2 * kHalf + 1, kFoldRows, [&](Index i, Index j) {
    const double u = (static_cast<double>(i) - kHalf) / kHalf, y = 0.1 * j;
    if (u <= 0) return Vec3(-u, y, 0);
    return Vec3(0.93 * u, y + 0.037 * u, u * (0.3 - dip_strength(y) * (1 - u)));
  });
  const Analysed a = analyse({fold});
  ASSERT_EQ(a.found.dropped_hits, 0u);
  ASSERT_EQ(a.contours.contours.size(), 1u);
  ASSERT_EQ(a.contours.contours[0].type, ContourType::kCrease);
  const ContourRegions& r = a.gia.contours[0];
  auto column = [](Index v) { return v % (2 * kHalf + 1); };
  std::vector<Index> dip;
  for (Index v = 0; v < a.mesh.vertex_count(); ++v) {
    if (column(v) > kHalf && a.x[v].z() < 0) dip.push_back(v);
  }
  ASSERT_GT(dip.size(), 5u);
  const int dip_side =
      std::binary_search(r.vertices[0].begin(), r.vertices[0].end(), dip.back()) ? 0 : 1;
  // The two sides together: the dip and the lower half's vertices under it, with crease vertices
  // between the pinches; for the lower half, every vertex under the dip by more than the upper
  // half's piecewise-linear error (0.01) and none beside it by as much.
  std::vector<Index> both;
  for (const auto& side : r.vertices) both.insert(both.end(), side.begin(), side.end());
  std::sort(both.begin(), both.end());
  EXPECT_EQ(std::adjacent_find(both.begin(), both.end()), both.end()) << "the sides overlap";
  for (Index v = 0; v < a.mesh.vertex_count(); ++v) {
    const bool in = std::binary_search(both.begin(), both.end(), v);
    if (column(v) > kHalf) {
      EXPECT_EQ(in, a.x[v].z() < 0) << v;
    } else if (column(v) < kHalf) {
      const double height = upper_height(a.x[v].x(), a.x[v].y());
      if (height < -0.01) {
        EXPECT_TRUE(in) << v;
      } else if (height > 0.01) {
        EXPECT_FALSE(in) << v;
      }
    }
  }
  // The split between the sides is the nearer path: beyond two columns from the crease (where
  // both paths are near, at the pinches) each vertex is on its own half's side.
  for (int side = 0; side < 2; ++side) {
    for (Index v : r.vertices[side]) {
      const Index c = column(v);
      if (c + 2 < kHalf) {
        EXPECT_NE(side, dip_side) << v;
      } else if (c > kHalf + 2) {
        EXPECT_EQ(side, dip_side) << v;
      }
    }
  }
  // The dip goes back up through the lower half, the part under it down.
  EXPECT_GT(r.back_through[dip_side].z(), 0);
  EXPECT_LT(r.back_through[1 - dip_side].z(), 0);
  // As deep as the dip reaches below the crossing points, at most.
  double deepest = 0;
  for (Index v : dip) deepest = std::max(deepest, -a.x[v].z());
  EXPECT_GT(r.depth[dip_side], 0);
  EXPECT_LE(r.depth[dip_side], deepest + 1e-12);
}

// A sheet folded in two whose upper half turns through the lower one: it rises off the crease
// where y < 0.5 and sinks below the lower half beyond, so the halves cross along a line from
// the crease to the upper half's rim. The crossing curve runs from the rim into the fold, where
// the narrow phase skips the triangles beside the crease (they are adjacent): a path from the
// border to a point inside cuts nothing off by itself. The fold closes it: from the curve's end
// along the crease to the border, the part of the upper half between the line, the crease and
// the rim is the region, and it goes back down through the lower half. Without the closure
// neither side has a region.
constexpr Index kTwistHalf = 10, kTwistRows = 21;

// The lower half's height under (x, y): a plane sloping down from the crease.
double twisted_lower_height(double x) {
  return -0.05 * x;
}

Vec3 twisted_fold_point(Index i, Index j) {
  const double u = (static_cast<double>(i) - kTwistHalf) / kTwistHalf, y = 0.1 * j;
  if (u <= 0) return Vec3(-u, y, twisted_lower_height(-u));
  return Vec3(0.93 * u, y + 0.037 * u, u * 0.3 * (0.5 - y));
}

TEST(Gia, ACurveFromTheRimIntoAFoldIsClosedByTheCreaseToTheBorder) {
  const PolygonMesh fold = quad_grid(2 * kTwistHalf + 1, kTwistRows, twisted_fold_point);
  const Analysed a = analyse({fold});
  ASSERT_EQ(a.found.dropped_hits, 0u);
  ASSERT_EQ(a.contours.contours.size(), 1u);
  ASSERT_EQ(a.contours.contours[0].type, ContourType::kBoundary);
  const ContourRegions& r = a.gia.contours[0];
  auto column = [](Index v) { return v % (2 * kTwistHalf + 1); };
  // The upper half's vertices above the lower half (by more than its piecewise-linear error) are
  // the region, beyond the crease column; none of the lower half is in it.
  std::vector<Index> above;
  for (Index v = 0; v < a.mesh.vertex_count(); ++v) {
    const double over = a.x[v].z() - twisted_lower_height(a.x[v].x());
    if (column(v) > kTwistHalf + 1 && over > 0.01) above.push_back(v);
  }
  ASSERT_GT(above.size(), 20u);
  const int side = r.vertices[0].empty() ? 1 : 0;
  EXPECT_TRUE(r.vertices[1 - side].empty()) << "the lower half's path bounds nothing";
  const std::vector<Index>& region = r.vertices[side];
  ASSERT_FALSE(region.empty()) << "the crease closes the curve";
  for (Index v : above) EXPECT_TRUE(std::binary_search(region.begin(), region.end(), v)) << v;
  for (Index v : region) {
    EXPECT_GE(column(v), kTwistHalf) << v;
    EXPECT_GT(a.x[v].z() - twisted_lower_height(a.x[v].x()), -0.01) << v;
  }
  // Back down through the lower half, by no more than the region reaches above it.
  EXPECT_LT(r.back_through[side].z(), 0);
  double highest = 0;
  for (Index v : region) highest = std::max(highest, a.x[v].z());
  EXPECT_GT(r.depth[side], 0);
  EXPECT_LE(r.depth[side], highest + 0.05 + 1e-12);
}

// Wicke et al.'s "BLI": three triangles around the corner c = (1, 0, 0), each subdivided three
// times at edge midpoints. T1 lies in the plane y = 0, T2 in z = 0 joins it, and T3 goes on from
// T2 through T1: it shares only c with T1, so the crossing curve runs from c (a fan folded
// through itself) across T3 to T3's border edge. On T3 that path goes from a border vertex to
// the border and cuts off the tip that went through T1. (The tip is moved from Wicke's
// (0.5, -0.5, 0.5) to (0.53, -0.41, 0.43), so that no subdivision vertex or edge of one lies
// exactly on the other's; only c is on both, by construction.)
PolygonMesh subdivided(const Positions& corners, const std::vector<std::array<Index, 3>>& triangles,
                       int levels) {
  Positions x = corners;
  std::vector<std::array<Index, 3>> faces = triangles;
  for (int level = 0; level < levels; ++level) {
    std::map<std::pair<Index, Index>, Index> midpoint;
    auto middle = [&](Index a, Index b) {
      const auto key = std::minmax(a, b);
      const auto [it, added] = midpoint.try_emplace({key.first, key.second}, 0);
      if (added) {
        it->second = static_cast<Index>(x.size());
        x.push_back(0.5 * (x[a] + x[b]));
      }
      return it->second;
    };
    std::vector<std::array<Index, 3>> finer;
    for (const auto& [a, b, c] : faces) {
      const Index ab = middle(a, b), bc = middle(b, c), ca = middle(c, a);
      finer.insert(finer.end(), {{a, ab, ca}, {ab, b, bc}, {ca, bc, c}, {ab, bc, ca}});
    }
    faces = std::move(finer);
  }
  return test::triangles(x, faces);
}

TEST(Gia, APathFromAPinchAtTheBorderToTheBorderCutsOffTheTipBeyondIt) {
  const Positions corners{{0, 0, 0}, {0, 0, 1}, {1, 0, 0}, {0, 1, 0}, {0.53, -0.41, 0.43}};
  const std::vector<std::array<Index, 3>> triangles{{0, 1, 2}, {0, 2, 3}, {3, 2, 4}};
  const Analysed a = analyse({subdivided(corners, triangles, 3)});
  ASSERT_EQ(a.found.dropped_hits, 0u);
  ASSERT_EQ(a.contours.contours.size(), 1u);
  const ContourRegions& r = a.gia.contours[0];
  // The tip: T3's vertices beyond T1's plane (y < 0). T3's vertices are those with z > 0 and
  // y != 0 that are not T1's or T2's; T1 and T2 lie in y = 0 and z = 0.
  std::vector<Index> tip;
  for (Index v = 0; v < a.mesh.vertex_count(); ++v) {
    if (a.x[v].y() < 0) tip.push_back(v);
  }
  ASSERT_GT(tip.size(), 5u);
  const int tip_side =
      std::binary_search(r.vertices[0].begin(), r.vertices[0].end(), tip.front()) ? 0 : 1;
  EXPECT_EQ(r.vertices[tip_side], tip);
  // The other side's path ends inside T1: it bounds nothing.
  EXPECT_TRUE(r.vertices[1 - tip_side].empty());
  // The tip goes back up through T1's plane, by no more than it reaches below it.
  EXPECT_GT(r.back_through[tip_side].y(), 0);
  double deepest = 0;
  for (Index v : tip) deepest = std::max(deepest, -a.x[v].y());
  EXPECT_GT(r.depth[tip_side], 0);
  EXPECT_LE(r.depth[tip_side], deepest + 1e-12);
}

TEST(Gia, SameRegionsForOneAndTwoThreads) {
  test::CrumpleOptions options;
  options.nx = options.ny = 40;
  options.folds = 3;
  const auto pieces = test::crumpled_pieces(options, 2);
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const Analysed one = analyse(pieces);
  omp_set_num_threads(2);
  const Analysed two = analyse(pieces);
  omp_set_num_threads(threads);
  ASSERT_GT(one.contours.contours.size(), 4u);
  ASSERT_EQ(one.gia.contours.size(), two.gia.contours.size());
  std::size_t with_region = 0;
  for (std::size_t c = 0; c < one.gia.contours.size(); ++c) {
    for (int side = 0; side < 2; ++side) {
      EXPECT_EQ(one.gia.contours[c].vertices[side], two.gia.contours[c].vertices[side]);
      EXPECT_EQ(one.gia.contours[c].back_through[side], two.gia.contours[c].back_through[side]);
      with_region += !one.gia.contours[c].vertices[side].empty();
    }
  }
  EXPECT_GT(with_region, 0u);
  EXPECT_EQ(one.gia.vertex_regions.items, two.gia.vertex_regions.items);
}

// True when two triangles of v's fan that share only v cross: an edge of one, away from v,
// passes through the other (a pinch, where an open contour may end).
bool fan_folds_through_itself(const ClothMesh& mesh, const Positions& x, Index v) {
  const auto around = mesh.vertex_triangles[v];
  for (Index t : around) {
    for (Index o : around) {
      const auto& a = mesh.triangles[t];
      const auto& b = mesh.triangles[o];
      int shared = 0;
      for (Index u : a) shared += std::count(b.begin(), b.end(), u);
      if (shared != 1) continue;
      for (int k = 0; k < 3; ++k) {
        const Index p = a[k], q = a[(k + 1) % 3];
        if (p == v || q == v) continue;
        Hit hit;
        if (intersect_edge_triangle(x[p], x[q], x[b[0]], x[b[1]], x[b[2]], hit) ==
            EdgeTriangleResult::kHit) {
          return true;
        }
      }
    }
  }
  return false;
}

// Whether each connected part of `wall` (through edges between its vertices) has a vertex of
// `touch`.
bool wall_parts_touch(const ClothMesh& mesh, const std::set<Index>& wall,
                      const std::set<Index>& touch) {
  std::set<Index> seen;
  for (Index start : wall) {
    if (seen.count(start)) continue;
    bool touches = false;
    std::vector<Index> queue{start};
    seen.insert(start);
    for (std::size_t head = 0; head < queue.size(); ++head) {
      const Index v = queue[head];
      touches = touches || touch.count(v);
      for (Index e : mesh.vertex_edges[v]) {
        for (Index u : mesh.edges[e].vertices) {
          if (wall.count(u) && seen.insert(u).second) queue.push_back(u);
        }
      }
    }
    if (!touches) return false;
  }
  return true;
}

// Every region is bounded by its contour: no mesh edge joins a region vertex to a vertex outside
// it unless that edge is one of the contour's cut edges on that side (checked on a crumpled
// tangle against the hits directly), or the outside vertex is on the wall that closes an open
// curve: each connected part of such vertices holds a corner of a triangle the curve crosses
// (a pinch it ends at, or the path along the fold from its end). The two sides of an open contour
// that ends at two pinches bound one region together: out of it lead only both sides' cut edges and
// the pinches.
TEST(Gia, EveryRegionIsClosedExceptAcrossItsContoursCutEdges) {
  test::CrumpleOptions options;
  options.nx = options.ny = 30;
  options.folds = 3;
  const auto pieces = test::crumpled_pieces(options, 1);
  const Analysed a = analyse(pieces);
  std::size_t pinched = 0;
  for (std::size_t c = 0; c < a.gia.contours.size(); ++c) {
    const Contour& contour = a.contours.contours[c];
    const auto& sides = a.gia.contours[c].vertices;
    const bool joined = contour.type == ContourType::kCrease && !sides[0].empty();
    pinched += joined;
    for (int side = 0; side < 2; ++side) {
      std::vector<Index> region = sides[side];
      if (joined) {
        region.insert(region.end(), sides[1 - side].begin(), sides[1 - side].end());
        std::sort(region.begin(), region.end());
      }
      if (region.empty()) continue;
      std::map<Index, int> cut;
      for (std::size_t k = 0; k < contour.hits.size(); ++k) {
        if (joined || (contour.hit_edge_on_side0[k] != 0) == (side == 0)) {
          cut[a.found.hits[contour.hits[k]].edge] ^= 1;
        }
      }
      std::set<Index> wall;  // outside vertices joined to the region by an edge not cut
      for (std::size_t e = 0; e < a.mesh.edges.size(); ++e) {
        const auto& [u, v] = a.mesh.edges[e].vertices;
        const bool u_in = std::binary_search(region.begin(), region.end(), u);
        const bool v_in = std::binary_search(region.begin(), region.end(), v);
        if (u_in == v_in || cut[static_cast<Index>(e)] == 1) continue;
        const Index outside = u_in ? v : u;
        if (joined) {
          EXPECT_TRUE(fan_folds_through_itself(a.mesh, a.x, outside))
              << "contour " << c << " side " << side;
        } else {
          wall.insert(outside);
        }
      }
      if (wall.empty()) continue;
      EXPECT_NE(contour.type, ContourType::kLoop) << "contour " << c << " side " << side;
      std::set<Index> crossed;
      for (Index segment : contour.segments) {
        for (Index t : a.found.segments[segment].triangles) {
          crossed.insert(a.mesh.triangles[t].begin(), a.mesh.triangles[t].end());
        }
      }
      EXPECT_TRUE(wall_parts_touch(a.mesh, wall, crossed)) << "contour " << c << " side " << side;
    }
  }
  RecordProperty("pinched_contours", static_cast<int>(pinched));
}

}  // namespace
}  // namespace untangle

// Weld: seams sewn, checked against hand-built layouts (which vertices are copies, and which of
// them end border edges running together, is known from the grids), and the cases that must
// stay unwelded.
#include "untangle/weld.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace untangle {
namespace {

// Two panels of 4 x 3 vertices side by side in z = 0: the left one's column 3 and the right
// one's column 0 are at x = 3, copies of each other (3 seam vertices). `gap` moves the right
// panel away along x.
std::vector<PolygonMesh> sewn_panels(double gap = 0) {
  auto panel = [](double x0) {
    return quad_grid(4, 3, [x0](Index i, Index j) { return Vec3(x0 + i, j, 0); });
  };
  return {panel(0), panel(3 + gap)};
}

Positions all_positions(const std::vector<PolygonMesh>& pieces) {
  Positions all;
  for (const PolygonMesh& piece : pieces) {
    all.insert(all.end(), piece.positions.begin(), piece.positions.end());
  }
  return all;
}

// Property: the seam's copies become one vertex each (24 - 3), the panels one piece, every
// polygon keeps its corners' places (read through the welded indices, against the input's),
// and positions go back to every copy.
TEST(Weld, SewnPanelsBecomeOnePieceWithOneVertexPerSeamPlace) {
  const std::vector<PolygonMesh> pieces = sewn_panels();
  const Weld weld = sew_seams(pieces);
  ASSERT_EQ(weld.pieces.size(), 1u);
  EXPECT_FALSE(weld.welds_nothing());
  EXPECT_EQ(weld.first_copy.size(), 21u);
  EXPECT_EQ(weld.welded_of.size(), 24u);
  for (Index j = 0; j < 3; ++j) {
    EXPECT_EQ(weld.welded_of[j * 4 + 3], weld.welded_of[12 + j * 4]) << "seam row " << j;
  }
  const PolygonMesh& welded = weld.pieces[0];
  ASSERT_EQ(welded.face_sizes.size(), 12u);
  std::size_t at = 0;
  for (std::size_t p = 0; p < 2; ++p) {
    for (std::size_t k = 0; k < pieces[p].face_indices.size(); ++k, ++at) {
      EXPECT_EQ(welded.positions[welded.face_indices[at]],
                pieces[p].positions[pieces[p].face_indices[k]]);
    }
  }
  const Positions input = all_positions(pieces);
  EXPECT_EQ(weld.to_input(weld.to_welded(input)), input);
  const ClothMesh mesh = ClothMesh::build(weld.pieces);
  EXPECT_EQ(mesh.vertex_count(), 21u);
  EXPECT_EQ(mesh.report.non_manifold_edges, 0u);
}

// Property: copies that part in another position set (a rest shape, a later frame) stay apart,
// and input without copies passes through as it is.
TEST(Weld, CopiesThatPartInAnotherSetStayApart) {
  const std::vector<PolygonMesh> pieces = sewn_panels();
  const Positions apart = all_positions(sewn_panels(0.5));
  const Positions* const agree[] = {&apart};
  const Weld weld = sew_seams(pieces, agree);
  EXPECT_TRUE(weld.welds_nothing());
  ASSERT_EQ(weld.pieces.size(), 2u);
  EXPECT_EQ(weld.pieces[1].positions, pieces[1].positions);
  EXPECT_EQ(weld.pieces[1].face_indices, pieces[1].face_indices);
  const std::vector<PolygonMesh> separate = sewn_panels(0.5);
  EXPECT_TRUE(sew_seams(separate).welds_nothing());
}

// Property: a quad folded flat onto itself (its two border edges running together, the other
// two of zero length) would become a quad with repeated corners: its copies stay apart, so the
// welded mesh still builds; the seam of the panels is sewn.
TEST(Weld, CornersOfOnePolygonAreNotWelded) {
  std::vector<PolygonMesh> pieces = sewn_panels();
  PolygonMesh folded;
  folded.positions = {Vec3(0, 5, 0), Vec3(1, 5, 0), Vec3(1, 5, 0), Vec3(0, 5, 0)};
  folded.face_sizes = {4};
  folded.face_indices = {0, 1, 2, 3};
  pieces.push_back(folded);
  const Weld weld = sew_seams(pieces);
  EXPECT_EQ(weld.first_copy.size(), 21u + 4u);
  EXPECT_NO_THROW(ClothMesh::build(weld.pieces));
}

// Property: two sheets crossing exactly through a line of vertices (a horizontal grid and a
// vertical one whose middle row lies on the first's middle column) share three places, inside
// or at single border points, and no border edge: nothing is sewn, so the crossing stays one.
TEST(Weld, SheetsCrossingThroughVerticesAreNotWelded) {
  const std::vector<PolygonMesh> pieces = {
      quad_grid(3, 3, [](Index i, Index j) { return Vec3(i, j, 0); }),
      quad_grid(3, 3, [](Index i, Index j) { return Vec3(1, i, double(j) - 1); })};
  EXPECT_EQ(pieces[0].positions[4], pieces[1].positions[4]);  // the shared middle
  const Weld weld = sew_seams(pieces);
  EXPECT_TRUE(weld.welds_nothing());
  EXPECT_EQ(weld.pieces.size(), 2u);
}

// Property: a pinned copy (inverse mass 0) pins its welded vertex.
TEST(Weld, APinnedCopyPinsTheWeldedVertex) {
  const Weld weld = sew_seams(sewn_panels());
  std::vector<double> inverse_mass(24, 1.0);
  inverse_mass[12] = 0;  // the right panel's copy of seam row 0
  const std::vector<double> welded = weld.to_welded_inverse_mass(inverse_mass);
  ASSERT_EQ(welded.size(), 21u);
  EXPECT_EQ(welded[weld.welded_of[3]], 0.0);
  EXPECT_EQ(welded[weld.welded_of[7]], 1.0);
  EXPECT_TRUE(weld.to_welded_inverse_mass({}).empty());
}

// The message of the MeshError that building `pieces` throws ("" when it does not throw).
std::string build_error(const std::vector<PolygonMesh>& pieces) {
  try {
    ClothMesh::build(pieces);
  } catch (const MeshError& error) {
    return error.what();
  }
  return "";
}

// Property: input the build refuses reaches it unwelded, so its error names the input's piece,
// face and vertex: an index out of range, a repeated corner and a two-corner face in the second
// panel (sewn to the first, were the input good), a non-finite position, a set of the wrong size.
TEST(Weld, BadInputPassesThroughToTheBuildsError) {
  std::vector<PolygonMesh> out_of_range = sewn_panels();
  out_of_range[1].face_indices[5] = 99;
  const Weld weld = sew_seams(out_of_range);
  EXPECT_TRUE(weld.welds_nothing());
  EXPECT_EQ(weld.pieces[1].face_indices, out_of_range[1].face_indices);
  EXPECT_EQ(build_error(weld.pieces), build_error(out_of_range));
  EXPECT_NE(build_error(out_of_range).find("piece 1: face 1 uses vertex 99"), std::string::npos)
      << build_error(out_of_range);

  std::vector<PolygonMesh> repeated = sewn_panels();
  repeated[1].face_indices[1] = repeated[1].face_indices[0];
  EXPECT_EQ(build_error(sew_seams(repeated).pieces),
            "piece 1: face 0 uses vertex 0 more than once");

  std::vector<PolygonMesh> two_corners = sewn_panels();
  two_corners[1].face_sizes.push_back(2);
  two_corners[1].face_indices.insert(two_corners[1].face_indices.end(), {0, 1});
  EXPECT_EQ(build_error(sew_seams(two_corners).pieces), build_error(two_corners));
  EXPECT_NE(build_error(two_corners).find("piece 1: face 6"), std::string::npos)
      << build_error(two_corners);

  std::vector<PolygonMesh> not_finite = sewn_panels();
  not_finite[0].positions[2].x() = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(sew_seams(not_finite).welds_nothing());
  const Positions short_set(5, Vec3::Zero());
  const Positions* const agree[] = {&short_set};
  EXPECT_TRUE(sew_seams(sewn_panels(), agree).welds_nothing());
}

}  // namespace
}  // namespace untangle

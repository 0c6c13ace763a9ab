// Global intersection analysis (Baraff, Witkin & Kass 2003 "Untangling cloth"; Wicke et al.
// 2006): the surface regions each intersection contour bounds. On each side of a contour the
// curve cuts the mesh edges that pierce the other side; removing them splits that side's piece
// into parts, and the smallest complete parts are the region that went through (a closed loop's
// inside, the flap beyond a path that ends on the border, the lobes of a figure eight). An open
// curve whose two ends run into pinched fans (two triangles sharing one vertex cross) is one
// loop on the surface with its paths on both sides; the fold it bounds is split between the
// sides. An open curve whose side bounds nothing by itself but ends inside the cloth where two
// layers are joined by a fold is closed along the fold (the layers touch along its crease): by
// the path where the cloth is most folded, to the border loop of its other end or to its other
// inner end. A curve that splits nothing even so (both ends on different borders, a loop around
// a tube's handle) bounds no region.
#pragma once

#include "untangle/contours.hpp"

namespace untangle {

struct ContourRegions {
  // Per side of the contour (Contour's side 0 and 1): the vertices of the region it bounds on
  // that side, sorted; empty when the curve on that side does not split its piece.
  std::array<std::vector<Index>, 2> vertices;
  // Per side: the direction that takes the region back through the other side's surface, the
  // sum over the side's cut edges of (outside end - inside end) along the pierced triangle's
  // unit normal; zero when the side has no region.
  std::array<Vec3, 2> back_through{Vec3::Zero(), Vec3::Zero()};
  // Per side: how far the region reaches beyond the surface it went through, along the way back
  // (from the mean crossing point of its cut edges); the move that takes it back is no longer.
  std::array<double, 2> depth{0, 0};
};

struct GiaOptions {
  // A region that is not complete after this many vertices is not taken (its side is treated
  // as splitting nothing): bounds the work of a dense tangle's many contours.
  std::size_t max_region_vertices = 1u << 20;
  // An open curve whose side bounds nothing by itself is closed along the fold from its inner
  // end (docs/untangler.md, "A curve that runs into a fold").
  bool close_at_creases = true;
};

struct GlobalIntersections {
  std::vector<ContourRegions> contours;  // per contour of the Contours
  // Per vertex, the labels 2 * contour + side of the regions it lies in, ascending.
  Adjacency vertex_regions;
  double seconds = 0;

  // True when a and b lie in the two opposite regions of one contour: they have passed through
  // each other, and a push that keeps their current sides holds the tangle.
  bool opposite(Index a, Index b) const;
  bool in_region(Index v) const {
    return vertex_regions.offsets[v + 1] > vertex_regions.offsets[v];
  }
};

// Deterministic and independent of the thread count (contours run in parallel, gathered in
// order).
GlobalIntersections analyse_intersections(const ClothMesh& mesh, const Positions& positions,
                                          const Intersections& intersections,
                                          const Contours& contours, const GiaOptions& options = {});

}  // namespace untangle

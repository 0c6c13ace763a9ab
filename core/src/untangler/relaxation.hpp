// Relaxation: lowering the stretch of a clean state the untangling reached, through clean states
// only (docs/untangler.md). Internal to core/src/untangler*.
#pragma once

#include <algorithm>
#include <cmath>

#include "stages.hpp"

namespace untangle::detail {

// Over the user's edges: the diagonals that split a polygon into triangles are left out, since
// a crushed quad of a cloth cache can have a diagonal of almost zero length whose ratio says
// nothing about the stretch of the cloth.
inline double max_edge_strain(const ClothMesh& mesh, const Positions& reference,
                              const Positions& x) {
  double strain = 0;
  for (const MeshEdge& edge : mesh.edges) {
    if (mesh.edge_is_diagonal(edge)) continue;
    const double before = (reference[edge.vertices[1]] - reference[edge.vertices[0]]).norm();
    if (!(before > 0)) continue;  // a collapsed input edge has no length to keep
    const double after = (x[edge.vertices[1]] - x[edge.vertices[0]]).norm();
    strain = std::max(strain, std::abs(after / before - 1));
  }
  return strain;
}

// The clean state the untangling reached is stretched where the pushes went. Each relaxation
// frame runs the solver on it without the response and the pull (the pull leads back into the
// tangle), with proximity pairs that only hold the gap they have: a clean state's sides are
// consistent, and crushed layers pushed apart to the thickness would be stretched again. Where
// the frame still brings an intersection back, its move is halved until the state is clean
// again (checked by detection), so every state the relaxation goes through is clean; the one of
// least strain is kept in `clean`. Returns false when progress cancelled.
bool relax(Splits& splits, const Positions& reference, const FrameTerms& untangling,
           const UntangleOptions& options, const Progress& progress, Positions& clean,
           UntangleReport& report);

}  // namespace untangle::detail

// Strain limit: each polygon edge (not the diagonals that split a polygon) projected back into
// [1 - limit, 1 + limit] times its rest length (strain limiting, Provot 1995), so the
// untangler's pushes cannot stretch the cloth beyond it. Gauss-Seidel sweeps colour by colour,
// each colour in parallel; part of the solver's iterations (SolverInput::strain_limit).
#pragma once

#include <array>
#include <vector>

#include "untangle/mesh.hpp"

namespace untangle {

class StrainLimit {
 public:
  // The polygon edges of the mesh with their rest lengths: a crushed quad's diagonal may be of
  // almost no length, and its ratio says nothing about the stretch of the cloth.
  explicit StrainLimit(const ClothMesh& mesh);

  // Takes the rest lengths from `rest` again (after ClothMesh::set_rest_positions).
  void update_rest(const Positions& rest);

  // The sweeps at the end of one solver iteration. Runs its colours with orphaned `omp for`:
  // called from inside the solve's thread team.
  void project(const std::vector<double>& w, double limit, Positions& x) const;

  // After a frame's iterations: over-relaxed sweeps until no edge is beyond the limit (within a
  // rounding tolerance), at most a fixed number; a thread team of its own when `parallel`.
  void finish(const std::vector<double>& w, double limit, Positions& x, bool parallel) const;

 private:
  void sweep(const std::vector<double>& w, double limit, Positions& x, double over) const;

  // In colour order: colour c is [offsets_[c], offsets_[c + 1]).
  std::vector<std::array<Index, 2>> particles_;
  std::vector<double> rest_;
  std::vector<Index> offsets_;
};

}  // namespace untangle

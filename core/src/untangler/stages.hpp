// The stages of one untangler frame (docs/untangler.md), as the untangler composes them: per
// split of the polygons into triangles, detection, global intersection analysis, the method's
// response with the regions' pushes, and the solver; both splits together; and detection in
// general position. Internal to core/src/untangler*.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "untangle/detection.hpp"
#include "untangle/gia.hpp"
#include "untangle/response.hpp"
#include "untangle/solver.hpp"
#include "untangle/untangler.hpp"

namespace untangle::detail {

using Clock = std::chrono::steady_clock;

// The stages are timed on the clock the whole call is, so their sum never exceeds its time.
inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// What one untangler frame asks of the stages, explicitly (see SolverInput for the solver's terms).
struct FrameTerms {
  Settings settings;  // the thickness resolved, the response strength scaled
  double spacing = 0;
  bool untangle = true;          // the response and the regions' pushes (off while relaxing)
  bool region_push = true;       // each region moves back through the other side as a whole
  bool flip_sides = true;        // proximity pairs in opposite regions are pushed back through
  bool close_at_creases = true;  // GiaOptions::close_at_creases
  const Positions* pull_targets = nullptr;
  double pull_stiffness = 0;
  const std::vector<std::array<Index, 4>>* flat_quads = nullptr;
  double strain_limit = 0;
  bool finish_strain_limit = true;  // off: the caller finishes the states it keeps
  bool hold_gaps = false;
  bool ring_pairs = false;
  bool soft_diagonals = false;
};

// The stages of an untangler frame on one split of the polygons into triangles: detection, global
// intersection analysis, the method's response with the regions' pushes, and the solver. The
// untangler composes them itself; a scene's World runs none of its terms.
class SplitStages {
 public:
  SplitStages(ClothMesh mesh, const std::vector<double>& inverse_mass)
      : mesh_(std::make_unique<ClothMesh>(std::move(mesh))),
        inverse_mass_(&inverse_mass),
        detection_(*mesh_, mesh_->rest_positions) {}

  const ClothMesh& mesh() const { return *mesh_; }
  const Detection& detection() const { return detection_; }
  const std::vector<double>& inverse_mass() const { return *inverse_mass_; }
  std::size_t pairs() const { return detection_.intersections().pairs.size(); }

  // A new rest shape (edge lengths, bending, degenerate triangles); the topology stays.
  void set_rest(const Positions& rest) {
    mesh_->set_rest_positions(rest);
    if (solver_) solver_->update_rest();
  }

  void set_method(Method method);

  // Detects x; returns its pairs, and counts each hit dropped as exactly through a vertex or an
  // edge as one more: such a state is not known to be clean.
  std::size_t detect(const Positions& x, double thickness) {
    const auto start = Clock::now();
    detection_.run(x, thickness);
    seconds_.detection += seconds_since(start);
    return pairs() + detection_.intersections().dropped_hits;
  }

  // The time of each stage since the last reset.
  const UntangleStageSeconds& seconds() const { return seconds_; }
  void reset_seconds() { seconds_ = {}; }

  // One quasi-static frame from x, which detect() has just seen: the response and the regions'
  // pushes applied in parts across the solver's iterations, then the solver's constraints.
  void frame(Positions& x, const FrameTerms& terms);

  // Sweeps every polygon edge of x into the strain limit (a frame run without its finish).
  void finish_strain_limit(Positions& x, double limit);

 private:
  // Each region moves as a whole by `step` along its way back through the other side: a tangle
  // is undone by taking back the part that went through, not only the particles along its
  // contour (which the stretch behind them pulls back into place). A particle in several regions
  // gets the mean of their moves.
  void add_region_pushes(const GlobalIntersections& regions, double step, double thickness,
                         Positions& delta) const;

  std::unique_ptr<ClothMesh> mesh_;  // behind a pointer: the detection and solver refer to it
  const std::vector<double>* inverse_mass_;
  Detection detection_;
  std::unique_ptr<Solver> solver_;  // built on the first frame: a detection-only split needs none
  std::unique_ptr<Response> response_;
  Method method_ = Method::kIcm;
  UntangleStageSeconds seconds_;
};

// Both splits of one call: the library's and, for meshes with polygons of four corners or more,
// the other diagonal's. A state is clean only when both are.
struct Splits {
  SplitStages library;
  std::unique_ptr<SplitStages> other;
  double thickness = 0;

  // Pairs of x in the library's split, else (when that one is clean) in the other's: 0 only when
  // both are clean. Returns the split that counted them in `counted`.
  std::size_t detect(const Positions& x, SplitStages** counted = nullptr) {
    std::size_t pairs = library.detect(x, thickness);
    SplitStages* split = &library;
    if (pairs == 0 && other) {
      pairs = other->detect(x, thickness);
      if (pairs > 0) split = other.get();
    }
    if (counted) *counted = split;
    return pairs;
  }
  void for_each(const std::function<void(SplitStages&)>& f) {
    f(library);
    if (other) f(*other);
  }
};

// The library's split of `mesh` and, when it has polygons of four corners or more, the other
// diagonal's; `inverse_mass` must outlive them.
Splits make_splits(const ClothMesh& mesh, const std::vector<double>& inverse_mass);

// Splits::detect on x, first moving x into general position: the ends of every edge whose hit
// went exactly through a vertex or an edge are nudged (general_position.hpp) until no hit is
// dropped, so every crossing is seen whole. Returns the pairs as detect() counts them.
std::size_t detect_in_general_position(Splits& splits, Positions& x, double spacing, bool nudge,
                                       SplitStages** counted = nullptr);

}  // namespace untangle::detail

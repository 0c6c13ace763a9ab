#include "relaxation.hpp"

namespace untangle::detail {
namespace {

// Relaxing the stretch of a clean state needs solver iterations, not detections: each relaxation
// frame runs this many times the frame's solver iterations between two detections.
constexpr int kRelaxIterationFactor = 2;
// A relaxation frame whose result intersects is taken only in part: its move is halved up to
// this many times until the state it reaches is clean.
constexpr int kRelaxHalvings = 4;
// Relaxation stops after kRelaxPatience frames in a row that each lower the strain by less than
// kRelaxProgress of it: the rest of the budget would buy almost nothing (on the Blender tangles
// the strain limit holds the strain at the limit and relaxation frames were a fifth of the work).
// One such frame is enough: a second one never lowered the strain on the Blender tangles.
constexpr int kRelaxPatience = 1;
constexpr double kRelaxProgress = 0.01;

}  // namespace

bool relax(Splits& splits, const Positions& reference, const FrameTerms& untangling,
           const UntangleOptions& options, const Progress& progress, Positions& clean,
           UntangleReport& report) {
  const ClothMesh& mesh = splits.library.mesh();
  double best_strain = max_edge_strain(mesh, reference, clean);
  if (best_strain <= options.relax_strain) return true;
  FrameTerms terms = untangling;
  terms.untangle = false;
  terms.finish_strain_limit = true;  // every state relaxation takes is within the strain limit
  terms.hold_gaps = true;
  terms.pull_targets = nullptr;
  terms.flat_quads = nullptr;
  terms.settings.bending_compliance = options.settings.bending_compliance;  // eased on stalls
  terms.settings.iterations = kRelaxIterationFactor * options.settings.iterations;
  auto clean_at = [&](const Positions& x) { return splits.detect(x) == 0; };
  auto part_of = [&](const Positions& from, const Positions& to, double part) {
    Positions x(from.size());
    for (std::size_t v = 0; v < x.size(); ++v) x[v] = from[v] + part * (to[v] - from[v]);
    return x;
  };
  Positions state = clean;
  int unimproved = 0;  // frames in a row without progress
  // Relaxation frames count as iterations: together with the untangling they stay within
  // max_iterations.
  for (int frame = 0;
       frame < options.relax_iterations && report.iterations < options.max_iterations; ++frame) {
    splits.library.detect(state, splits.thickness);  // the frame's proximity search shares the tree
    Positions target = state;
    splits.library.frame(target, terms);
    // The largest part of the move that stays clean. When that is not the whole move, only
    // half of it is taken, so the state kept is not one that only just misses an intersection
    // (a float rounding of the output, or the next frame's carried start, would cross it).
    double part = 1;
    int halving = 0;
    while (halving <= kRelaxHalvings && !clean_at(part_of(state, target, part))) {
      part *= 0.5;
      ++halving;
    }
    ++report.iterations;
    if (progress &&
        !progress(std::min(report.iterations, options.max_iterations), options.max_iterations, 0)) {
      return false;
    }
    if (halving > kRelaxHalvings) break;  // even a small part of the move intersects
    Positions next = part_of(state, target, halving == 0 ? 1.0 : 0.5 * part);
    if (halving > 0 && !clean_at(next)) break;  // the whole move was checked clean above
    state = std::move(next);
    const double strain = max_edge_strain(mesh, reference, state);
    // A frame counts as progress when it lowers the strain by kRelaxProgress of it at least.
    unimproved = strain < (1 - kRelaxProgress) * best_strain ? 0 : unimproved + 1;
    if (strain < best_strain) {
      best_strain = strain;
      clean = state;
    }
    if (unimproved >= kRelaxPatience) break;  // the strain limit or the tangle holds the strain
    if (strain <= options.relax_strain) break;
  }
  return true;
}

}  // namespace untangle::detail

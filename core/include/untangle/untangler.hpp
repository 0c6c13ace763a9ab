// Untangler: one mesh state in, an intersection-free state out (SPEC "The product", DESIGN
// "static untangler"). It runs the frame pipeline's own stages with no gravity and a soft pull
// toward the input shape, until no intersection is left or an iteration limit is reached; and
// the same frame by frame over a cache, carrying each frame's correction into the next.
#pragma once

#include <functional>
#include <span>

#include "untangle/world.hpp"

namespace untangle {

struct UntangleOptions {
  Settings settings;          // method, strength, thickness, threads; gravity is ignored
  int max_iterations = 1000;  // pipeline frames at most
  // Soft pull per frame (0..1) toward the input positions; in a sequence, toward a frame's carried
  // start (its input plus the previous frame's correction), so the correction is not undone.
  double pull_stiffness = 0.05;
  std::vector<double> inverse_mass;  // per vertex, 0 = pinned (never moves); empty = all 1
  // Once clean, up to relax_iterations more frames without the response and the pull, while
  // the strain against the input is above relax_strain: the solver evens out the stretch the
  // pushes left, with proximity pairs that hold their gaps; a frame that brings an intersection
  // back is cut short (its move halved until clean), and the clean state of least strain is
  // returned. A solve that does not get clean returns its state of fewest pairs.
  int relax_iterations = 30;
  // The push per pipeline frame relative to settings.response_strength at the start of a solve.
  // A single state (untangle) starts at the strongest push: it has no neighbouring frame to
  // match, and a strong push clears small tangles in far fewer frames than a gentle one.
  // The frames of a sequence (untangle_sequence) start gentle: each frame's correction shows as
  // a jump between two output frames, and the gentle push stops at the smallest correction that
  // is clean (the strong one made a cache pop further than the input moved).
  double strength_scale = 2.0;
  double sequence_strength_scale = 0.15;
  // A frame of a sequence (not independent) starts at half the push its predecessor ended at,
  // and never below sequence_strength_scale (docs/untangler.md, "The push schedule").
  bool carry_push = true;
  // A solve whose pair count has not reached a new low for stall_iterations frames doubles its
  // push, up to max_strength_scale: a gentle push alone stalls against the stretch and the pull
  // on deep tangles.
  int stall_iterations = 8;
  double max_strength_scale = 2.0;
  // With ICM: once the strongest push stalls too, go on with Ye's method (see untangler.cpp).
  bool fall_back_to_ye = true;
  // A stall also halves the pull toward the input: a stalled state is one where the push and the
  // pull back into the input's tangle balance, and a stronger push alone does not always tip it
  // (docs/untangler.md, "Stalls").
  bool ease_pull_on_stall = true;
  // And it halves the bending's stiffness (doubles its compliance): the bending keeps the input's
  // folds, and inside a tangle a fold is on the wrong side as much as the positions are (a
  // pleat one polygon wide, folded through itself, is held by its bending alone). Relaxation
  // keeps the bending as given.
  bool ease_bending_on_stall = true;
  // Every solver frame ends with sweeps until each polygon edge is within the strain limit. Off,
  // only the states a solve keeps are swept so (a clean state before it counts as clean, and
  // the state returned): the frames between go on from their last iteration's projection.
  bool finish_each_frame = false;
  // Global intersection analysis (docs/untangler.md): each region a contour bounds moves back
  // through the other side as a whole, and proximity pairs whose two sides lie in opposite
  // regions of one contour are pushed back through instead of held where they are.
  bool region_push = true;
  bool flip_sides = true;
  // GIA closes an open curve that runs into a fold along the fold (GiaOptions).
  bool close_at_creases = true;
  // A state with a hit exactly through a vertex or an edge (dropped by the narrow phase) is never
  // taken as clean; with general_position, the ends of such edges are nudged off it (1e-7 of a
  // spacing, at most 1e-4; general_position.hpp), so the crossing is seen whole.
  bool general_position = true;
  // The quads of every crossing seen are made flatter in the frames that follow, so that a sheet
  // inside a bent quad's tetrahedron cannot hide from one split in the other.
  bool flatten_crossed_quads = true;
  // Proximity pairs also one polygon ring apart (folds one quad wide), and the diagonals that
  // split the quads as soft as bending (the two splits solve one cloth).
  bool ring_pairs = true;
  bool soft_diagonals = true;
  double relax_strain = 0.02;
  // Every solver iteration ends by bringing each polygon edge back within this strain of its rest
  // length (SolverInput::strain_limit): the pushes of a deep tangle cannot stretch the cloth beyond
  // it, they have to bend it instead. 0 = off.
  double strain_limit = 0.045;
};

// Wall time of each stage, summed over a solve's frames (relaxation included) and both splits:
// what an iteration costs, and where.
struct UntangleStageSeconds {
  double detection = 0;     // BVH refit, narrow phase and contours
  double analysis = 0;      // global intersection analysis
  double response = 0;      // the method's response and the regions' pushes
  double solver = 0;        // the solver's iterations: constraints, strain limit, proximity
  double proximity = 0;     // the part of `solver` spent searching proximity pairs
  double strain_limit = 0;  // the part of `solver` in the final strain-limit sweeps
};

struct UntangleReport {
  // Intersecting pairs of the input and of the output: 0 only when both splits of the quads
  // (the library's and the other diagonal's) are clean.
  std::size_t pairs_before = 0;
  std::size_t pairs_after = 0;
  int iterations = 0;            // all frames run, relaxation included
  int iterations_to_clean = -1;  // frames until the first clean state; -1 = never clean
  std::array<std::size_t, 3> contours_left{};  // loop, boundary, crease
  double max_displacement = 0;                 // from the input
  double mean_displacement = 0;
  double max_edge_strain = 0;  // max |length_out / length_in - 1| over the polygon edges
  bool cancelled = false;
  int method_switches = 0;  // 1 when a stalled ICM solve went on with Ye's method
  // The push (relative to settings.response_strength) the solve started at and had at its end.
  double start_push = 0;
  double end_push = 0;
  double seconds = 0;
  UntangleStageSeconds stage_seconds;
};

// Called after every iteration with (iteration, max_iterations, pairs); return false to cancel.
using Progress = std::function<bool(int, int, std::size_t)>;

// rest: the shape whose edge lengths and bending the solver keeps (default: the input itself).
// On cancel, output holds the best state reached (the clean one of least strain, else the last);
// input is never modified.
UntangleReport untangle(const ClothMesh& mesh, const Positions& input, const Positions* rest,
                        const UntangleOptions& options, Positions& output,
                        const Progress& progress = {});

struct SequenceReport {
  std::vector<UntangleReport> frames;
  bool cancelled = false;  // frames holds the frames finished before the cancel
};

// Untangles every frame; unless independent, frame f+1 starts from input[f+1] + (output[f] -
// input[f]) and is pulled toward that start. Each input frame is its own reference shape (the
// strain and displacement are measured against it). progress gets (frame, frames, pairs).
SequenceReport untangle_sequence(const ClothMesh& mesh, std::span<const Positions> frames,
                                 const UntangleOptions& options, bool independent,
                                 std::vector<Positions>& output, const Progress& progress = {});

}  // namespace untangle

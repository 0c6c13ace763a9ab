#include "untangle/untangler.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "untangle/detection.hpp"
#include "untangle/general_position.hpp"
#include "untangle/gia.hpp"
#include "untangle/responses/icm.hpp"
#include "untangle/solver.hpp"
#include "untangle/thread_scope.hpp"

namespace untangle {
namespace {

using Clock = std::chrono::steady_clock;

// The stages are timed on the clock the whole call is, so their sum never exceeds its time.
double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Relaxing the stretch of a clean state needs solver iterations, not detections: each relaxation
// frame runs this many times the frame's solver iterations between two detections.
constexpr int kRelaxIterationFactor = 2;
// A carried start beyond the strain limit by more than this is relaxed (the solver's own
// tolerance of the limit).
constexpr double kStrainTolerance = 1e-4;

void check_positions(const ClothMesh& mesh, const Positions& positions, const char* what) {
  if (positions.size() != mesh.vertex_count()) {
    throw std::invalid_argument(std::string(what) + " has " + std::to_string(positions.size()) +
                                " positions, but the mesh has " +
                                std::to_string(mesh.vertex_count()) + " vertices");
  }
  for (std::size_t v = 0; v < positions.size(); ++v) {
    if (!positions[v].allFinite()) {
      throw std::invalid_argument(std::string(what) + ": vertex " + std::to_string(v) +
                                  " has a non-finite coordinate (NaN or Inf)");
    }
  }
}

void check_options(const ClothMesh& mesh, const UntangleOptions& options) {
  validate(options.settings);
  if (options.max_iterations < 0) {
    throw std::invalid_argument("max_iterations must be >= 0, got " +
                                std::to_string(options.max_iterations));
  }
  if (!(options.pull_stiffness >= 0 && options.pull_stiffness <= 1)) {
    throw std::invalid_argument("pull_stiffness must be in [0, 1], got " +
                                std::to_string(options.pull_stiffness));
  }
  if (options.relax_iterations < 0 || !(options.relax_strain >= 0)) {
    throw std::invalid_argument("relax_iterations and relax_strain must be >= 0");
  }
  for (const double scale : {options.strength_scale, options.sequence_strength_scale}) {
    if (!(scale > 0 && scale <= options.max_strength_scale && options.max_strength_scale <= 10)) {
      throw std::invalid_argument(
          "strength_scale and sequence_strength_scale must be in (0, max_strength_scale], and "
          "max_strength_scale at most 10; got " +
          std::to_string(scale) + " and " + std::to_string(options.max_strength_scale));
    }
  }
  if (!(options.strain_limit >= 0 && options.strain_limit <= 1)) {
    throw std::invalid_argument("strain_limit must be in [0, 1], got " +
                                std::to_string(options.strain_limit));
  }
  if (options.stall_iterations < 1) {
    throw std::invalid_argument("stall_iterations must be >= 1, got " +
                                std::to_string(options.stall_iterations));
  }
  if (!options.inverse_mass.empty() && options.inverse_mass.size() != mesh.vertex_count()) {
    throw std::invalid_argument("inverse_mass has " + std::to_string(options.inverse_mass.size()) +
                                " entries, but the mesh has " +
                                std::to_string(mesh.vertex_count()) + " vertices");
  }
}

// The same polygons as fans from their second corner (the library's fans start at the first):
// a bent quad is then split along its other diagonal, as Blender's BVHTree.FromPolygons may
// split it. Null when every polygon is a triangle.
std::unique_ptr<ClothMesh> other_diagonals(const ClothMesh& mesh) {
  std::vector<PolygonMesh> pieces(mesh.piece_count());
  for (std::size_t p = 0; p < pieces.size(); ++p) {
    pieces[p].positions.assign(mesh.rest_positions.begin() + mesh.piece_vertex_begin[p],
                               mesh.rest_positions.begin() + mesh.piece_vertex_begin[p + 1]);
  }
  bool any = false;
  std::vector<Index> corners;
  for (std::size_t f = 0; f + 1 < mesh.polygon_triangle_begin.size(); ++f) {
    const Index begin = mesh.polygon_triangle_begin[f], end = mesh.polygon_triangle_begin[f + 1];
    if (begin == end) continue;
    const auto& first = mesh.triangles[begin];
    corners.assign(first.begin(), first.end());
    for (Index t = begin + 1; t < end; ++t) corners.push_back(mesh.triangles[t][2]);
    if (corners.size() > 3) {
      std::rotate(corners.begin(), corners.begin() + 1, corners.end());
      any = true;
    }
    const Index piece = mesh.triangle_piece[begin];
    PolygonMesh& out = pieces[piece];
    out.face_sizes.push_back(static_cast<Index>(corners.size()));
    for (Index v : corners) out.face_indices.push_back(v - mesh.piece_vertex_begin[piece]);
  }
  if (!any) return nullptr;
  return std::make_unique<ClothMesh>(ClothMesh::build(pieces));
}

// What one untangler frame asks of the stages, explicitly (see SolverInput for the solver's terms).
struct FrameTerms {
  Settings settings;  // the thickness resolved, the response strength scaled
  double spacing = 0;
  bool untangle = true;     // the response and the regions' pushes (off while relaxing)
  bool region_push = true;  // each region moves back through the other side as a whole
  bool flip_sides = true;   // proximity pairs in opposite regions are pushed back through
  const Positions* pull_targets = nullptr;
  double pull_stiffness = 0;
  const std::vector<std::array<Index, 4>>* flat_quads = nullptr;
  double strain_limit = 0;
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

  void set_method(Method method) {
    if (response_ && method == method_) return;
    method_ = method;
    // The untangler raises the push of a stalled solve itself: ICM's own fading is off.
    if (method == Method::kIcm) {
      IcmOptions options;
      options.fade_stuck_contours = false;
      response_ = std::make_unique<IcmResponse>(options);
    } else {
      response_ = make_response(method);
    }
  }

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
  void frame(Positions& x, const FrameTerms& terms) {
    const Intersections& found = detection_.intersections();
    const Contours& contours = detection_.contours();
    GlobalIntersections regions;
    const bool analysed = terms.untangle && !contours.contours.empty();
    auto start = Clock::now();
    if (analysed) regions = analyse_intersections(*mesh_, x, found, contours);
    seconds_.analysis += seconds_since(start);
    start = Clock::now();
    Displacement displacement;
    if (terms.untangle && !contours.contours.empty()) {
      displacement =
          response_->compute(ResponseInput{*mesh_, x, *inverse_mass_, found, contours,
                                           terms.settings, terms.spacing, detection_.bvh(), &x});
      if (displacement.delta.size() != x.size()) displacement.delta.assign(x.size(), Vec3::Zero());
      if (terms.region_push)
        add_region_pushes(regions, terms.settings.response_strength * terms.spacing,
                          terms.settings.thickness, displacement.delta);
      for (Vec3& d : displacement.delta) {
        if (!d.allFinite()) d = Vec3::Zero();  // a response never brings a NaN into the state
      }
      if (displacement.near_contour.size() != x.size()) displacement.near_contour.clear();
    }
    seconds_.response += seconds_since(start);
    start = Clock::now();
    if (!solver_) solver_ = std::make_unique<Solver>(detection_.bvh());
    const Positions previous = x;
    const std::vector<Sphere> no_spheres;
    SolverInput input{
        terms.settings,  *inverse_mass_,     previous,
        no_spheres,      std::nullopt,       displacement.empty() ? nullptr : &displacement,
        nullptr,         terms.pull_targets, terms.pull_stiffness,
        terms.flat_quads};
    input.strain_limit = terms.strain_limit;
    input.hold_gaps = terms.hold_gaps;
    input.ring_pairs = terms.ring_pairs;
    input.soft_diagonals = terms.soft_diagonals;
    input.regions = analysed && terms.flip_sides ? &regions : nullptr;
    SolverOutput output;
    solver_->solve(input, x, output);
    for (std::size_t v = 0; v < x.size(); ++v) {
      if (!x[v].allFinite()) x[v] = previous[v];
    }
    seconds_.solver += seconds_since(start);
    seconds_.proximity += output.proximity_seconds;
  }

 private:
  // Each region moves as a whole by `step` along its way back through the other side: a tangle
  // is undone by taking back the part that went through, not only the particles along its
  // contour (which the stretch behind them pulls back into place). A particle in several regions
  // gets the mean of their moves.
  void add_region_pushes(const GlobalIntersections& regions, double step, double thickness,
                         Positions& delta) const {
    std::vector<Vec3> sum(delta.size(), Vec3::Zero());
    std::vector<Index> count(delta.size(), 0);
    for (const ContourRegions& contour : regions.contours) {
      for (int side = 0; side < 2; ++side) {
        const Vec3& way = contour.back_through[side];
        const double length = way.norm();
        if (contour.vertices[side].empty() || !(length > 0)) continue;
        // No further than the two sides reach through each other (a cap beyond a sheet, or a
        // sheet's disc under a dome: measured from the crossings, each side's depth is the
        // other's share), and the thickness: a shallow region is not thrown through the layers
        // behind the one it crossed.
        const double distance = std::min(step, contour.depth[0] + contour.depth[1] + thickness);
        const Vec3 move = (distance / length) * way;
        for (Index v : contour.vertices[side]) {
          sum[v] += move;
          ++count[v];
        }
      }
    }
    for (std::size_t v = 0; v < delta.size(); ++v) {
      if (count[v] > 0 && (*inverse_mass_)[v] > 0) delta[v] += sum[v] / count[v];
    }
  }

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

// The first nudge off a hit exactly through a vertex or an edge, in spacings, and the most
// rounds, each ten times the last: 1e-7 of a spacing is a thousand times the narrow phase's
// tolerance, and 1e-4 still far below anything a user sees.
constexpr double kFirstNudge = 1e-7;
constexpr int kNudgeRounds = 4;

// detect() on x, first moving x into general position: the ends of every edge whose hit went
// exactly through a vertex or an edge are nudged (general_position.hpp) until no hit is dropped,
// so every crossing is seen whole. Returns the pairs as detect() counts them.
std::size_t detect_in_general_position(Splits& splits, Positions& x, double spacing,
                                       const std::vector<double>& inverse_mass, bool nudge,
                                       SplitStages** counted = nullptr) {
  SplitStages* split = nullptr;
  std::size_t pairs = splits.detect(x, &split);
  double distance = kFirstNudge * spacing;
  for (int round = 0; nudge && round < kNudgeRounds; ++round, distance *= 10) {
    const std::vector<Index>& edges = split->detection().intersections().dropped_edges;
    if (edges.empty()) break;
    if (nudge_edge_ends(split->mesh(), edges, inverse_mass, distance, round, x) == 0) break;
    pairs = splits.detect(x, &split);
  }
  if (counted) *counted = split;
  return pairs;
}

// A relaxation frame whose result intersects is taken only in part: its move is halved up to
// this many times until the state it reaches is clean.
constexpr int kRelaxHalvings = 4;
// Relaxation stops after kRelaxPatience frames in a row that each lower the strain by less than
// kRelaxProgress of it: the rest of the budget would buy almost nothing (on the Blender tangles
// the strain limit holds the strain at the limit and relaxation frames were a fifth of the work).
// One such frame is enough: with two, the second never lowered the strain on the four Blender
// tangles (bakes byte-identical), and the sphere bakes took 98 -> 93 and 158 -> 153 frames.
constexpr int kRelaxPatience = 1;
constexpr double kRelaxProgress = 0.01;

// The clean state the untangling reached is stretched where the pushes went. Each relaxation
// frame runs the solver on it without the response and the pull (the pull leads back into the
// tangle), with proximity pairs that only hold the gap they have: a clean state's sides are
// consistent, and crushed layers pushed apart to the thickness would be stretched again. Where
// the frame still brings an intersection back, its move is halved until the state is clean
// again (checked by detection), so every state the relaxation goes through is clean; the one of
// least strain is kept in `clean`. Returns false when progress cancelled.
bool relax(Splits& splits, const Positions& reference, const FrameTerms& untangling,
           const UntangleOptions& options, const Progress& progress, Positions& clean,
           UntangleReport& report) {
  const ClothMesh& mesh = splits.library.mesh();
  double best_strain = max_edge_strain(mesh, reference, clean);
  if (best_strain <= options.relax_strain) return true;
  FrameTerms terms = untangling;
  terms.untangle = false;
  terms.hold_gaps = true;
  terms.pull_targets = nullptr;
  terms.flat_quads = nullptr;
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

// The quads (corners in order) of the polygons in `flat` that have four corners.
std::vector<std::array<Index, 4>> quads_of(const ClothMesh& mesh,
                                           const std::vector<Index>& polygons) {
  std::vector<std::array<Index, 4>> quads;
  for (Index f : polygons) {
    const Index begin = mesh.polygon_triangle_begin[f];
    if (mesh.polygon_triangle_begin[f + 1] - begin != 2) continue;
    // A quad is the fan of two triangles from its first corner.
    const auto& first = mesh.triangles[begin];
    quads.push_back({first[0], first[1], first[2], mesh.triangles[begin + 1][2]});
  }
  return quads;
}

// One untangling solve: starts from `start`, keeps the edge lengths and bending of `rest` and is
// pulled toward `reference`, the shape the user wants kept (the figures are measured against
// it). Quasi-static: each frame starts at rest, so no push overshoots.
UntangleReport solve(Splits& splits, const Positions& start, const Positions& reference,
                     const Positions& rest, const UntangleOptions& options, double start_strength,
                     Positions& output, const Progress& progress) {
  const auto started = Clock::now();
  const ClothMesh& mesh = splits.library.mesh();
  splits.for_each([&](SplitStages& split) {
    split.set_rest(rest);
    split.set_method(options.settings.method);
    split.reset_seconds();
  });
  FrameTerms terms;
  terms.settings = options.settings;
  terms.settings.gravity = Vec3::Zero();
  terms.spacing = options.settings.spacing > 0 ? options.settings.spacing : mesh.mean_edge_length;
  terms.settings.thickness =
      std::min(options.settings.thickness, kMaxThicknessPerSpacing * terms.spacing);
  terms.settings.response_strength *= start_strength;
  splits.thickness = terms.settings.thickness;
  terms.region_push = options.region_push;
  terms.flip_sides = options.flip_sides;
  terms.pull_targets = &reference;
  terms.pull_stiffness = options.pull_stiffness;
  terms.strain_limit = options.strain_limit;
  terms.ring_pairs = options.ring_pairs;
  terms.soft_diagonals = options.soft_diagonals;

  UntangleReport report;
  // "Before" counts the input's own intersections (not those of a carried-over start), in both
  // splits as "after" does.
  const std::vector<double>& inverse_mass = splits.library.inverse_mass();
  if (&start != &reference) {
    Positions input = reference;
    report.pairs_before = detect_in_general_position(splits, input, terms.spacing, inverse_mass,
                                                     options.general_position);
  }
  // The split whose frame runs next: the library's, or the other one where only that one crosses
  // (a bent quad split along its other diagonal, as Blender's BVH may split it). It has just
  // detected the state the frame starts from.
  SplitStages* stepping = nullptr;
  Positions reached = start;  // the last state whose pairs are known
  const std::size_t start_pairs = detect_in_general_position(
      splits, reached, terms.spacing, inverse_mass, options.general_position, &stepping);
  if (&start == &reference) report.pairs_before = start_pairs;
  std::size_t reached_pairs = start_pairs;
  Positions best_clean;
  // A carried start may stretch its input frame beyond the strain limit (the previous frame's
  // correction on a cloth that has moved on): it is no candidate for the state of fewest pairs,
  // which is returned when no state gets clean. Every state a frame reaches is within the limit.
  const bool strained_start =
      options.strain_limit > 0 &&
      max_edge_strain(mesh, reference, start) > options.strain_limit + kStrainTolerance;
  std::size_t fewest_pairs = strained_start ? std::numeric_limits<std::size_t>::max() : start_pairs;
  Positions fewest = reached;  // the state of fewest_pairs
  SplitStages* fewest_split = stepping;
  int stalled = 0;
  double strength_scale = start_strength;
  // The quads of every crossing found so far, of either split, are made flatter in the frames
  // that follow: a crossing that only one split sees is a sheet inside the tetrahedron between
  // a bent quad's two splits.
  std::vector<std::uint8_t> flat(mesh.polygon_count(), 0);
  std::vector<Index> flat_polygons;
  std::vector<std::array<Index, 4>> flat_quads;
  auto flatten_quads_of = [&](const SplitStages& detected) {
    if (!options.flatten_crossed_quads) return;
    const std::size_t count = flat_polygons.size();
    for (const auto& pair : detected.detection().intersections().pairs) {
      for (Index t : pair) {
        const Index f = detected.mesh().triangle_polygon[t];
        if (!flat[f]) {
          flat[f] = 1;
          flat_polygons.push_back(f);
        }
      }
    }
    if (flat_polygons.size() == count) return;
    flat_quads = quads_of(mesh, flat_polygons);
    terms.flat_quads = &flat_quads;
  };
  if (start_pairs > 0) flatten_quads_of(*stepping);
  while (reached_pairs > 0 && report.iterations < options.max_iterations) {
    stepping->frame(reached, terms);
    ++report.iterations;
    reached_pairs = detect_in_general_position(splits, reached, terms.spacing, inverse_mass,
                                               options.general_position, &stepping);
    flatten_quads_of(*stepping);
    if (progress && !progress(std::min(report.iterations, options.max_iterations),
                              options.max_iterations, reached_pairs)) {
      report.cancelled = true;
      break;
    }
    if (reached_pairs == 0) {
      best_clean = reached;
      report.iterations_to_clean = report.iterations;
      break;
    }
    if (reached_pairs < fewest_pairs) {
      fewest_pairs = reached_pairs;
      fewest = reached;
      fewest_split = stepping;
      stalled = 0;
    } else if (++stalled >= options.stall_iterations) {
      // A gentle push alone stalls against the stretch and the pull on deep tangles.
      stalled = 0;
      if (strength_scale < options.max_strength_scale) {
        strength_scale = std::min(2 * strength_scale, options.max_strength_scale);
      } else if (terms.settings.method == Method::kIcm && options.fall_back_to_ye) {
        // ICM moves only the particles along a contour; Ye's rule for boundary contours moves
        // the flap itself, and is ICM for the others.
        terms.settings.method = Method::kYe;
        splits.for_each([](SplitStages& split) { split.set_method(Method::kYe); });
        strength_scale = start_strength;
        ++report.method_switches;
      }
      terms.settings.response_strength = options.settings.response_strength * strength_scale;
    }
  }
  terms.flat_quads = nullptr;
  // A start that is clean already (a carried correction that still fits) is kept as it is unless
  // it stretches the input frame beyond the strain limit: relaxing a state within the limit
  // would change the correction from frame to frame.
  if (start_pairs == 0) {
    best_clean = reached;  // the start, in general position
    report.iterations_to_clean = 0;
  }
  if ((start_pairs > 0 || strained_start) && !best_clean.empty() && !report.cancelled &&
      options.relax_iterations > 0) {
    if (!relax(splits, reference, terms, options, progress, best_clean, report)) {
      report.cancelled = true;  // the clean state of least strain so far is returned
    }
  }

  std::size_t pairs = reached_pairs;
  SplitStages* counted = stepping;
  if (!best_clean.empty()) {
    output = best_clean;
    pairs = 0;
  } else if (report.cancelled || report.iterations == 0 || pairs <= fewest_pairs) {
    output = reached;  // the last state whose pairs are known
  } else {
    // A deep tangle can get worse again once the push is strong: the state with the fewest
    // intersections seen is returned instead of the last.
    output = fewest;
    pairs = fewest_pairs;
    counted = fewest_split;
    splits.detect(fewest, &counted);
  }
  if (pairs > 0) {
    report.contours_left = counted->detection().contours().count_by_type;
    if (progress && !report.cancelled) progress(report.iterations, options.max_iterations, pairs);
  }
  for (const Vec3& x : output) {
    if (!x.allFinite()) throw std::logic_error("the untangler produced a non-finite position");
  }

  report.pairs_after = pairs;
  double sum = 0;
  for (std::size_t v = 0; v < output.size(); ++v) {
    const double d = (output[v] - reference[v]).norm();
    report.max_displacement = std::max(report.max_displacement, d);
    sum += d;
  }
  report.mean_displacement = output.empty() ? 0.0 : sum / static_cast<double>(output.size());
  report.max_edge_strain = max_edge_strain(mesh, reference, output);
  splits.for_each([&](SplitStages& split) {
    const UntangleStageSeconds& t = split.seconds();
    UntangleStageSeconds& sum = report.stage_seconds;
    sum.detection += t.detection;
    sum.analysis += t.analysis;
    sum.response += t.response;
    sum.solver += t.solver;
    sum.proximity += t.proximity;
  });
  report.seconds = seconds_since(started);
  return report;
}

Splits make_splits(const ClothMesh& mesh, const std::vector<double>& inverse_mass) {
  Splits splits{SplitStages(mesh, inverse_mass), nullptr, 0};
  std::unique_ptr<ClothMesh> other = other_diagonals(mesh);
  if (other) splits.other = std::make_unique<SplitStages>(std::move(*other), inverse_mass);
  return splits;
}

std::vector<double> inverse_mass_of(const ClothMesh& mesh, const UntangleOptions& options) {
  return options.inverse_mass.empty() ? std::vector<double>(mesh.vertex_count(), 1.0)
                                      : options.inverse_mass;
}

}  // namespace

UntangleReport untangle(const ClothMesh& mesh, const Positions& input, const Positions* rest,
                        const UntangleOptions& options, Positions& output,
                        const Progress& progress) {
  check_positions(mesh, input, "the input");
  if (rest) check_positions(mesh, *rest, "the rest shape");
  check_options(mesh, options);
  // Into a local first: `output` may alias `input`, and a failed call must leave it unchanged.
  Positions result;
  const std::vector<double> inverse_mass = inverse_mass_of(mesh, options);
  ThreadScope threads(options.settings.threads, mesh.vertex_count());
  Splits splits = make_splits(mesh, inverse_mass);
  UntangleReport report = solve(splits, input, input, rest ? *rest : input, options,
                                options.strength_scale, result, progress);
  output = std::move(result);
  return report;
}

SequenceReport untangle_sequence(const ClothMesh& mesh, std::span<const Positions> frames,
                                 const UntangleOptions& options, bool independent,
                                 std::vector<Positions>& output, const Progress& progress) {
  for (std::size_t f = 0; f < frames.size(); ++f) {
    check_positions(mesh, frames[f], ("frame " + std::to_string(f)).c_str());
  }
  check_options(mesh, options);
  const std::vector<double> inverse_mass = inverse_mass_of(mesh, options);
  ThreadScope threads(options.settings.threads, mesh.vertex_count());
  Splits splits = make_splits(mesh, inverse_mass);
  SequenceReport report;
  std::vector<Positions> result;
  result.reserve(frames.size());
  const int frame_count = static_cast<int>(frames.size());
  for (std::size_t f = 0; f < frames.size(); ++f) {
    const Positions& input = frames[f];
    // A frame whose predecessor needed no correction starts from its input: the same solve as
    // an independent one, without detecting the same shape twice.
    const bool carried = !independent && f > 0 && result[f - 1] != frames[f - 1];
    Positions start;
    if (carried) {
      // The correction of the previous frame carried over: a tangle that persists starts solved
      // and the output does not pop.
      start = input;
      for (std::size_t v = 0; v < start.size(); ++v)
        start[v] += result[f - 1][v] - frames[f - 1][v];
    }
    Positions out;
    UntangleReport frame = solve(splits, carried ? start : input, input, input, options,
                                 options.sequence_strength_scale, out, {});
    result.push_back(std::move(out));
    report.frames.push_back(frame);
    if (progress &&
        !progress(static_cast<int>(f) + 1, frame_count, report.frames.back().pairs_after)) {
      report.cancelled = true;
      break;
    }
  }
  output = std::move(result);
  return report;
}

}  // namespace untangle

#include "untangle/untangler.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

namespace untangle {
namespace {

using Clock = std::chrono::steady_clock;

// Relaxing the stretch of a clean state needs solver iterations, not detections: each relaxation
// frame runs this many times the frame's solver iterations between two detections.
constexpr int kRelaxIterationFactor = 2;

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

// Over the user's edges: the diagonals that split a polygon into triangles are left out, since
// a crushed quad of a cloth cache can have a diagonal of almost zero length whose ratio says
// nothing about the stretch of the cloth.
double max_edge_strain(const ClothMesh& mesh, const Positions& reference, const Positions& x) {
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
  if (!(options.strength_scale > 0 && options.strength_scale <= 10)) {
    throw std::invalid_argument("strength_scale must be in (0, 10], got " +
                                std::to_string(options.strength_scale));
  }
  if (!(options.max_strength_scale >= options.strength_scale && options.max_strength_scale <= 10)) {
    throw std::invalid_argument("max_strength_scale must be in [strength_scale, 10], got " +
                                std::to_string(options.max_strength_scale));
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

// The world every solve of one call runs in: built once (BVH, solver colouring) on a copy of
// the caller's mesh, since a cache of many frames changes only the shapes between solves.
World make_world(const ClothMesh& mesh, const UntangleOptions& options) {
  Scene scene;
  scene.name = "untangle";
  scene.inverse_mass = options.inverse_mass.empty() ? std::vector<double>(mesh.vertex_count(), 1.0)
                                                    : options.inverse_mass;
  scene.settings = options.settings;  // solve() sets the untangler's own on top
  return World(mesh, scene);
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

// A world on the polygons split along their other diagonals: a state is clean only when both
// splits are (null when the mesh has no polygon of four corners or more).
std::unique_ptr<World> make_other_world(const ClothMesh& mesh, const UntangleOptions& options) {
  std::unique_ptr<ClothMesh> other = other_diagonals(mesh);
  if (!other) return nullptr;
  return std::make_unique<World>(make_world(*other, options));
}

// Pairs of x when its polygons are split along their other diagonals (0 without quads).
std::size_t other_split_pairs(World* other, const Positions& x) {
  if (!other) return 0;
  other->set_positions(x);
  other->detect();
  return other->intersections().pairs.size();
}

// Pairs of x as the world detects them, else (when that split is clean) as the other split
// does: 0 only when both are clean. Leaves world at x with its detection.
std::size_t pairs_of_both_splits(World& world, World* other, const Positions& x) {
  world.set_positions(x);
  world.detect();
  const std::size_t pairs = world.intersections().pairs.size();
  return pairs > 0 ? pairs : other_split_pairs(other, x);
}

// The contours of the split whose pairs were counted: the world's, or the other split's where only
// that one crosses (both detected the same state then).
std::array<std::size_t, 3> contours_of_counted_split(const World& world, const World* other) {
  const World& counted = world.intersections().pairs.empty() && other ? *other : world;
  return counted.contours().count_by_type;
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
bool relax(World& world, World* other, const Positions& reference, const UntangleOptions& options,
           const Progress& progress, Positions& clean, UntangleReport& report) {
  const ClothMesh& mesh = world.mesh();
  double best_strain = max_edge_strain(mesh, reference, clean);
  if (best_strain <= options.relax_strain) return true;
  const Settings untangling = world.settings();
  Settings settings = untangling;
  settings.untangle = false;
  settings.proximity = options.settings.proximity;
  settings.proximity_holds_gap = true;
  settings.iterations = kRelaxIterationFactor * options.settings.iterations;
  world.set_settings(settings);
  world.set_pull_stiffness(0);
  const Positions zero(mesh.vertex_count(), Vec3::Zero());
  auto clean_at = [&](const Positions& x) { return pairs_of_both_splits(world, other, x) == 0; };
  auto part_of = [&](const Positions& from, const Positions& to, double part) {
    Positions x(from.size());
    for (std::size_t v = 0; v < x.size(); ++v) x[v] = from[v] + part * (to[v] - from[v]);
    return x;
  };
  Positions state = clean;
  bool go_on = true;
  int unimproved = 0;  // frames in a row without progress
  // Relaxation frames count as iterations: together with the untangling they stay within
  // max_iterations.
  for (int frame = 0;
       frame < options.relax_iterations && report.iterations < options.max_iterations; ++frame) {
    world.set_positions(state);
    world.set_velocities(zero);
    world.step();
    const Positions target = world.positions();
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
      go_on = false;
      break;
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
  world.set_settings(untangling);
  return go_on;
}

// One untangling solve: starts from `start`, keeps the edge lengths and bending of `rest` and is
// pulled toward `reference`, the shape the user wants kept (the figures are measured against
// it). Quasi-static: velocities are cleared before each pipeline frame, so no push overshoots.
UntangleReport solve(World& world, World* other, const Positions& start, const Positions& reference,
                     const Positions& rest, const UntangleOptions& options, Positions& output,
                     const Progress& progress) {
  const auto started = Clock::now();
  const ClothMesh& mesh = world.mesh();
  Settings settings = options.settings;
  settings.gravity = Vec3::Zero();
  settings.fade_stuck_contours = false;  // a stall raises the push instead (below)
  settings.response_strength *= options.strength_scale;
  settings.strain_limit = options.strain_limit;
  // Crossings left in folds one quad wide are between triangles one ring apart, and the other
  // split of the quads must solve the same cloth (see Settings).
  settings.proximity_ring_pairs = true;
  settings.soft_diagonals = true;
  world.set_settings(settings);
  world.set_rest_shape(rest);
  world.set_pull_targets(reference);
  world.set_pull_stiffness(options.pull_stiffness);
  if (other) {
    other->set_settings(settings);
    other->set_rest_shape(rest);
    other->set_pull_targets(reference);
    other->set_pull_stiffness(options.pull_stiffness);
  }

  const Positions zero(mesh.vertex_count(), Vec3::Zero());
  UntangleReport report;
  // "Before" counts the input's own intersections (not those of a carried-over start), in both
  // splits as "after" does.
  if (&start != &reference) report.pairs_before = pairs_of_both_splits(world, other, reference);
  world.set_positions(start);
  world.detect();
  std::size_t start_pairs = world.intersections().pairs.size();
  // The split whose pipeline frame runs next, from `reached`: the library's, or the other one
  // where only that one crosses (a bent quad split along its other diagonal, as Blender's BVH may
  // split it). Each has just detected `reached`, and its frame uses that detection (velocities
  // are zero and there is no gravity, so the prediction leaves the positions as they are).
  World* stepping = &world;
  if (start_pairs == 0) {
    start_pairs = other_split_pairs(other, start);  // clean for both splits, or solved
    if (start_pairs > 0) stepping = other;
  }
  if (&start == &reference) report.pairs_before = start_pairs;
  Positions reached = world.positions();  // the last state whose pairs are known
  std::size_t reached_pairs = start_pairs;
  Positions best_clean;
  std::size_t fewest_pairs = start_pairs;
  Positions fewest = world.positions();  // the state of fewest_pairs
  int stalled = 0;
  double strength_scale = options.strength_scale;
  // A stronger push decided on a state applies from the frame after that state's own.
  std::optional<Settings> next_settings;
  // The quads of every crossing found so far, of either split, are made flatter in the frames
  // that follow: a crossing that only one split sees is a sheet inside the tetrahedron between
  // a bent quad's two splits, and frames on one split pushed such sheets into the other one's
  // triangles and back (the frames of the other split were a third of the sphere tangles' work).
  std::vector<std::uint8_t> flat(mesh.polygon_count(), 0);
  std::vector<Index> flat_polygons;
  auto flatten_quads_of = [&](const World& detected) {
    const std::size_t count = flat_polygons.size();
    for (const auto& pair : detected.intersections().pairs) {
      for (Index t : pair) {
        const Index f = detected.mesh().triangle_polygon[t];
        if (!flat[f]) {
          flat[f] = 1;
          flat_polygons.push_back(f);
        }
      }
    }
    if (flat_polygons.size() == count) return;
    world.set_flat_polygons(flat_polygons);
    if (other) other->set_flat_polygons(flat_polygons);
  };
  while (reached_pairs > 0 && report.iterations < options.max_iterations) {
    stepping->set_velocities(zero);
    stepping->step();
    if (stepping != &world) world.set_positions(stepping->positions());
    if (next_settings) {
      world.set_settings(*next_settings);
      if (other) other->set_settings(*next_settings);
      next_settings.reset();
    }
    ++report.iterations;
    reached = world.positions();
    world.detect();
    reached_pairs = world.intersections().pairs.size();
    stepping = &world;
    if (reached_pairs == 0) {
      reached_pairs = other_split_pairs(other, reached);
      if (reached_pairs > 0) stepping = other;
    }
    flatten_quads_of(*stepping);
    if (progress && !progress(std::min(report.iterations, options.max_iterations),
                              options.max_iterations, reached_pairs)) {
      report.cancelled = true;
      break;
    }
    if (reached_pairs == 0) {
      best_clean = reached;
      break;
    }
    if (reached_pairs < fewest_pairs) {
      fewest_pairs = reached_pairs;
      fewest = reached;
      stalled = 0;
    } else if (++stalled >= options.stall_iterations) {
      stalled = 0;
      Settings next = world.settings();
      if (strength_scale < options.max_strength_scale) {
        strength_scale = std::min(2 * strength_scale, options.max_strength_scale);
      } else if (next.method == Method::kIcm && options.fall_back_to_ye) {
        // ICM moves only the particles along a contour; a flap that went through another sheet
        // is pulled back by the stretch behind it, and that can stall. Ye's rule for such
        // (boundary) contours moves the flap itself, and is ICM for the others.
        next.method = Method::kYe;
        strength_scale = options.strength_scale;
        ++report.method_switches;
      }
      next.response_strength = options.settings.response_strength * strength_scale;
      next_settings = next;
    }
  }
  // Relaxation runs without the flattening: it held the stretch that relaxation evens out (the
  // Blender two_sheets bake took 9 more relaxation frames and kept 2.08 % strain against 1.85 %).
  world.set_flat_polygons({});
  if (other) other->set_flat_polygons({});
  // A start that is clean already (a carried correction that still fits) is returned as it is:
  // relaxing it would change the correction from frame to frame.
  if (start_pairs == 0) best_clean = world.positions();
  if (start_pairs > 0 && !best_clean.empty() && !report.cancelled && options.relax_iterations > 0) {
    if (!relax(world, other, reference, options, progress, best_clean, report)) {
      report.cancelled = true;  // the clean state of least strain so far is returned
    }
  }

  std::size_t pairs = reached_pairs;
  if (!best_clean.empty()) {
    world.set_positions(best_clean);
    pairs = 0;
  } else if (report.cancelled) {
    world.set_positions(reached);  // the last state whose pairs are known
    report.contours_left = contours_of_counted_split(world, other);
  } else if (report.iterations == 0) {
    report.contours_left = contours_of_counted_split(world, other);  // of the start, detected above
  } else {
    // The world is at the last state reached, detected by the loop: its pairs are reached_pairs.
    if (pairs > fewest_pairs) {
      // A deep tangle can get worse again once the push is strong: the state with the fewest
      // intersections seen is returned instead of the last.
      pairs = pairs_of_both_splits(world, other, fewest);
    }
    report.contours_left = contours_of_counted_split(world, other);
    if (progress) progress(report.iterations, options.max_iterations, pairs);
  }
  output = world.positions();
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
  report.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return report;
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
  World world = make_world(mesh, options);
  std::unique_ptr<World> other = make_other_world(mesh, options);
  UntangleReport report =
      solve(world, other.get(), input, input, rest ? *rest : input, options, result, progress);
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
  World world = make_world(mesh, options);
  std::unique_ptr<World> other = make_other_world(mesh, options);
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
    UntangleReport frame =
        solve(world, other.get(), carried ? start : input, input, input, options, out, {});
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

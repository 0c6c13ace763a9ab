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

#include "untangle/thread_scope.hpp"
#include "untangler/relaxation.hpp"

namespace untangle {
namespace {

using detail::Clock;
using detail::detect_in_general_position;
using detail::FrameTerms;
using detail::make_splits;
using detail::relax;
using detail::seconds_since;
using detail::Splits;
using detail::SplitStages;

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
// pulled toward `start`; `reference` is the shape the user gave, which the figures are measured
// against (the same as `start` unless a sequence carries a correction into it). Quasi-static:
// each frame starts at rest, so no push overshoots.
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
  terms.close_at_creases = options.close_at_creases;
  // A carried start is the input frame with the correction its predecessor needed. Pulled toward
  // the input instead, the cloth was drawn back into the tangle that correction had undone, and
  // the push undid it again: most of a bake's iterations went to that tug of war (the sphere
  // cache: 2,671 iterations, 1,011 with the pull toward the start; docs/untangler.md, "The pull
  // of a carried frame").
  terms.pull_targets = &start;
  terms.pull_stiffness = options.pull_stiffness;
  terms.strain_limit = options.strain_limit;
  terms.finish_strain_limit = options.finish_each_frame;
  terms.ring_pairs = options.ring_pairs;
  terms.soft_diagonals = options.soft_diagonals;

  UntangleReport report;
  // "Before" counts the input's own intersections (not those of a carried-over start), in both
  // splits as "after" does.
  if (&start != &reference) {
    Positions input = reference;
    report.pairs_before =
        detect_in_general_position(splits, input, terms.spacing, options.general_position);
  }
  // The split whose frame runs next: the library's, or the other one where only that one crosses
  // (a bent quad split along its other diagonal, as Blender's BVH may split it). It has just
  // detected the state the frame starts from.
  SplitStages* stepping = nullptr;
  Positions reached = start;  // the last state whose pairs are known
  const std::size_t start_pairs = detect_in_general_position(splits, reached, terms.spacing,
                                                             options.general_position, &stepping);
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
  // A clean start beyond the strain limit (a carried correction on a cloth that has moved on)
  // goes through the solver too: its frames hold the limit, and a clean state they reach is
  // relaxed as any other. Relaxation alone, from the start, takes only clean moves and can stay
  // beyond the limit (the triangulated sphere bake kept a clean frame at 29 % strain).
  while ((reached_pairs > 0 || (strained_start && report.iterations == 0)) &&
         report.iterations < options.max_iterations) {
    stepping->frame(reached, terms);
    ++report.iterations;
    reached_pairs = detect_in_general_position(splits, reached, terms.spacing,
                                               options.general_position, &stepping);
    if (reached_pairs == 0 && !terms.finish_strain_limit && options.strain_limit > 0) {
      // A clean state is kept, so it must be within the strain limit too: swept into it and
      // detected again (the solve goes on from it if that brought a crossing back).
      splits.library.finish_strain_limit(reached, options.strain_limit);
      reached_pairs = detect_in_general_position(splits, reached, terms.spacing,
                                                 options.general_position, &stepping);
    }
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
      if (options.ease_pull_on_stall) terms.pull_stiffness *= 0.5;
      if (options.ease_bending_on_stall) terms.settings.bending_compliance *= 2;
    }
  }
  terms.flat_quads = nullptr;
  report.start_push = start_strength;
  report.end_push = strength_scale;
  // A start that is clean already and within the strain limit (a carried correction that still
  // fits) is kept as it is: relaxing it would change the correction from frame to frame.
  if (start_pairs == 0 && !strained_start) {
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
  if (best_clean.empty() && !terms.finish_strain_limit && options.strain_limit > 0 &&
      report.iterations > 0) {
    // The state returned is within the strain limit too, and counted as it is returned.
    splits.library.finish_strain_limit(output, options.strain_limit);
    pairs = splits.detect(output, &counted);
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
    sum.strain_limit += t.strain_limit;
  });
  report.seconds = seconds_since(started);
  return report;
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
  double push = options.sequence_strength_scale;
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
        solve(splits, carried ? start : input, input, input, options, push, out, {});
    // The push is carried like the correction: a tangle that needed a strong push in this frame
    // mostly needs it in the next, and escalating to it again from the gentle start costs
    // stall_iterations frames per doubling. One doubling back, so that frames that get clean
    // without a stall return to the gentle push.
    if (options.carry_push && !independent)
      push = std::max(options.sequence_strength_scale, 0.5 * frame.end_push);
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

#include "stages.hpp"

#include <algorithm>

#include "untangle/general_position.hpp"
#include "untangle/responses/icm.hpp"

namespace untangle::detail {
namespace {

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

// The first nudge off a hit exactly through a vertex or an edge, in spacings, and the most
// rounds, each ten times the last: 1e-7 of a spacing is a thousand times the narrow phase's
// tolerance, and 1e-4 still far below anything a user sees.
constexpr double kFirstNudge = 1e-7;
constexpr int kNudgeRounds = 4;

}  // namespace

void SplitStages::set_method(Method method) {
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

// One quasi-static frame from x, which detect() has just seen: the response and the regions'
// pushes applied in parts across the solver's iterations, then the solver's constraints.
void SplitStages::frame(Positions& x, const FrameTerms& terms) {
  const Intersections& found = detection_.intersections();
  const Contours& contours = detection_.contours();
  GlobalIntersections regions;
  const bool analysed = terms.untangle && !contours.contours.empty();
  auto start = Clock::now();
  if (analysed) {
    GiaOptions options;
    options.close_at_creases = terms.close_at_creases;
    regions = analyse_intersections(*mesh_, x, found, contours, options);
  }
  seconds_.analysis += seconds_since(start);
  start = Clock::now();
  Displacement displacement;
  if (terms.untangle && !contours.contours.empty()) {
    displacement =
        response_->compute(ResponseInput{*mesh_, x, *inverse_mass_, found, contours, terms.settings,
                                         terms.spacing, detection_.bvh(), &x});
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
  input.finish_strain_limit = terms.finish_strain_limit;
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
  seconds_.strain_limit += output.strain_limit_seconds;
}

void SplitStages::finish_strain_limit(Positions& x, double limit) {
  if (!(limit > 0)) return;
  if (!solver_) solver_ = std::make_unique<Solver>(detection_.bvh());
  seconds_.strain_limit += solver_->finish_strain_limit(*inverse_mass_, limit, x);
}

// Each region moves as a whole by `step` along its way back through the other side: a tangle
// is undone by taking back the part that went through, not only the particles along its
// contour (which the stretch behind them pulls back into place). A particle in several regions
// gets the mean of their moves.
void SplitStages::add_region_pushes(const GlobalIntersections& regions, double step,
                                    double thickness, Positions& delta) const {
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

Splits make_splits(const ClothMesh& mesh, const std::vector<double>& inverse_mass) {
  Splits splits{SplitStages(mesh, inverse_mass), nullptr, 0};
  std::unique_ptr<ClothMesh> other = other_diagonals(mesh);
  if (other) splits.other = std::make_unique<SplitStages>(std::move(*other), inverse_mass);
  return splits;
}

std::size_t detect_in_general_position(Splits& splits, Positions& x, double spacing, bool nudge,
                                       SplitStages** counted) {
  SplitStages* split = nullptr;
  std::size_t pairs = splits.detect(x, &split);
  double distance = kFirstNudge * spacing;
  for (int round = 0; nudge && round < kNudgeRounds; ++round, distance *= 10) {
    const std::vector<Index>& edges = split->detection().intersections().dropped_edges;
    if (edges.empty()) break;
    if (nudge_edge_ends(split->mesh(), edges, split->inverse_mass(), distance, round, x) == 0)
      break;
    pairs = splits.detect(x, &split);
  }
  if (counted) *counted = split;
  return pairs;
}

}  // namespace untangle::detail

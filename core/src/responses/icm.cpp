#include "untangle/responses/icm.hpp"

#include <algorithm>
#include <cmath>

#include "../parallel_errors.hpp"

namespace untangle {
namespace {

// Below this |E.N| / |E| the edge runs along the triangle's plane: the hit point would slide
// arbitrarily far for a small move, so the gradient says nothing useful (Volino 2006, sec. 4).
constexpr double kGrazingCosine = 1e-3;

Vec3 triangle_normal(const ClothMesh& mesh, const Positions& x, Index t) {
  const auto& [a, b, c] = mesh.triangles[t];
  return (x[b] - x[a]).cross(x[c] - x[a]);
}

Index opposite_corner(const ClothMesh& mesh, Index t, const MeshEdge& edge) {
  for (Index v : mesh.triangles[t]) {
    if (v != edge.vertices[0] && v != edge.vertices[1]) return v;
  }
  return kNoIndex;
}

}  // namespace

Vec3 hit_gradient(const ClothMesh& mesh, const Positions& positions, const Hit& hit,
                  double normal_term) {
  const MeshEdge& edge = mesh.edges[hit.edge];
  const Vec3 e = positions[edge.vertices[1]] - positions[edge.vertices[0]];
  const Vec3 n_raw = triangle_normal(mesh, positions, hit.triangle);
  const double e_norm = e.norm(), n_norm = n_raw.norm();
  if (!(e_norm > 0) || !(n_norm > 0)) return Vec3::Zero();
  const Vec3 n = n_raw / n_norm;
  const double e_dot_n = e.dot(n);
  if (std::abs(e_dot_n) < kGrazingCosine * e_norm) return Vec3::Zero();

  Vec3 gradient = Vec3::Zero();
  const Index count = std::min<Index>(edge.triangle_count, 2);
  for (Index i = 0; i < count; ++i) {
    const Index t = edge.triangles[i];
    const Vec3 n_i = triangle_normal(mesh, positions, t);
    // The contour inside T_i follows the line where the planes of T_i and the hit triangle meet.
    Vec3 r = n.cross(n_i);
    const double r_norm = r.norm();
    if (!(r_norm > 1e-12 * n_i.norm())) continue;  // T_i parallel to the triangle: no line
    r /= r_norm;
    const Index c = opposite_corner(mesh, t, edge);
    const Vec3 into = positions[c] - hit.point;
    if (r.dot(into - into.dot(e) / (e_norm * e_norm) * e) < 0) r = -r;
    gradient += r - normal_term * (e.dot(r) / e_dot_n) * n;
  }
  return gradient;
}

Vec3 contour_gradient(const ClothMesh& mesh, const Positions& positions,
                      const Intersections& intersections, const Contour& contour,
                      double normal_term) {
  Vec3 d = Vec3::Zero();
  for (std::size_t k = 0; k < contour.hits.size(); ++k) {
    const Vec3 g = hit_gradient(mesh, positions, intersections.hits[contour.hits[k]], normal_term);
    d += contour.hit_edge_on_side0[k] ? g : Vec3(-g);
  }
  return d;
}

void push_hit(const ClothMesh& mesh, const std::vector<double>& inverse_mass, const Hit& hit,
              const Vec3& edge_move, std::vector<ParticlePush>& out) {
  const MeshEdge& edge = mesh.edges[hit.edge];
  const std::array<Index, 2> edge_corners = edge.vertices;
  const std::array<double, 2> edge_weights{1 - hit.t, hit.t};
  const auto& tri_corners = mesh.triangles[hit.triangle];
  const std::array<double, 3> tri_weights{hit.barycentric[0], hit.barycentric[1],
                                          hit.barycentric[2]};
  // The smallest inverse-mass weighted move of the corners that moves the interpolated point by
  // `move` (a PBD projection); a side whose corners are all pinned does not move.
  auto spread = [&](auto corners, auto weights, const Vec3& move) {
    double denominator = 0;
    for (std::size_t k = 0; k < corners.size(); ++k) {
      denominator += weights[k] * weights[k] * inverse_mass[corners[k]];
    }
    if (!(denominator > 0)) return;
    for (std::size_t k = 0; k < corners.size(); ++k) {
      const double w = inverse_mass[corners[k]];
      if (w == 0 || weights[k] <= 0) continue;
      // A free corner far from the hit next to pinned ones would get a huge share: cap it at
      // twice the move, the most any corner gets when all are free.
      const double share = std::min(weights[k] * w / denominator, 2.0);
      out.push_back({corners[k], share * move, weights[k]});
    }
  };
  spread(edge_corners, edge_weights, edge_move);
  spread(tri_corners, tri_weights, Vec3(-edge_move));
}

Positions average_pushes(std::size_t particle_count, const std::vector<ParticlePush>& pushes) {
  Positions sum(particle_count, Vec3::Zero());
  std::vector<double> weight(particle_count, 0.0);
  for (const ParticlePush& push : pushes) {
    sum[push.particle] += push.weight * push.delta;
    weight[push.particle] += push.weight;
  }
  for (std::size_t i = 0; i < particle_count; ++i) {
    if (weight[i] > 0) sum[i] /= weight[i];
  }
  return sum;
}

std::vector<std::uint8_t> particles_near_contours(const ClothMesh& mesh,
                                                  const Intersections& intersections) {
  std::vector<std::uint8_t> touched(mesh.vertex_count(), 0);
  for (const Hit& hit : intersections.hits) {
    for (Index v : mesh.edges[hit.edge].vertices) touched[v] = 1;
    for (Index v : mesh.triangles[hit.triangle]) touched[v] = 1;
  }
  std::vector<std::uint8_t> near = touched;
  for (Index v = 0; v < mesh.vertex_count(); ++v) {
    if (!touched[v]) continue;
    for (Index u : mesh.vertex_ring[v]) near[u] = 1;
  }
  return near;
}

std::vector<IcmResponse::Track> IcmResponse::track_contours(
    const Contours& contours, const std::vector<std::vector<Index>>& triangles) {
  std::vector<Track> tracks(contours.contours.size());
  std::map<Index, Index> triangle_track;
  for (std::size_t c = 0; c < contours.contours.size(); ++c) {
    const double length = contours.contours[c].length;
    // The previous contour sharing the most triangles; ties go to the lower index.
    std::map<Index, std::size_t> votes;
    for (Index t : triangles[c]) {
      auto found = triangle_track_.find(t);
      if (found != triangle_track_.end()) ++votes[found->second];
      triangle_track.emplace(t, static_cast<Index>(c));
    }
    Track track{length, 0};
    if (!votes.empty()) {
      const auto best = std::max_element(votes.begin(), votes.end(),
                                         [](auto& a, auto& b) { return a.second < b.second; });
      const Track& previous = tracks_[best->first];
      if (length < previous.best_length * (1 - options_.shrink_fraction)) {
        track = {length, 0};
      } else {
        track = {std::min(previous.best_length, length), previous.frames_without_shrinking + 1};
      }
    }
    tracks[c] = track;
  }
  triangle_track_ = std::move(triangle_track);
  return tracks;
}

Displacement IcmResponse::compute(const ResponseInput& input) {
  Displacement out;
  const Contours& contours = input.contours;
  if (!input.settings.untangle || contours.contours.empty()) {
    tracks_.clear();
    triangle_track_.clear();
    return out;
  }
  const std::size_t contour_count = contours.contours.size();
  const Intersections& hits = input.intersections;

  std::vector<std::vector<Index>> triangles(contour_count);
  for (std::size_t c = 0; c < contour_count; ++c) {
    for (Index s : contours.contours[c].segments) {
      const auto& pair = hits.segments[s].triangles;
      triangles[c].insert(triangles[c].end(), pair.begin(), pair.end());
    }
    std::sort(triangles[c].begin(), triangles[c].end());
    triangles[c].erase(std::unique(triangles[c].begin(), triangles[c].end()), triangles[c].end());
  }
  tracks_ = track_contours(contours, triangles);

  const double h0 = input.settings.response_strength * input.spacing;
  const double g0 = options_.g0;
  const int stuck_frames = std::max(options_.stuck_frames, 1);
  std::vector<std::vector<ParticlePush>> per_contour(contour_count);
  ParallelErrors errors;
#pragma omp parallel for schedule(dynamic, 4)
  for (std::ptrdiff_t ci = 0; ci < static_cast<std::ptrdiff_t>(contour_count); ++ci) {
    errors.run([&] {
      const std::size_t c = static_cast<std::size_t>(ci);
      const Contour& contour = contours.contours[c];
      const Vec3 d =
          contour_gradient(input.mesh, input.positions, hits, contour, options_.normal_term);
      Vec3 h = h0 * d / std::sqrt(d.squaredNorm() + g0 * g0);
      // A dead end does not get pushed forever: past the limit its push fades out over as many
      // frames again, and comes back in full if the contour starts shrinking (a new track).
      const int over = tracks_[c].frames_without_shrinking - stuck_frames;
      if (options_.fade_stuck_contours && over > 0)
        h *= std::max(0.0, 1.0 - static_cast<double>(over) / stuck_frames);
      if (!h.allFinite() || h.isZero()) return;
      for (std::size_t k = 0; k < contour.hits.size(); ++k) {
        const Vec3 edge_move = contour.hit_edge_on_side0[k] ? h : Vec3(-h);
        push_hit(input.mesh, input.inverse_mass, hits.hits[contour.hits[k]], edge_move,
                 per_contour[c]);
      }
    });
  }
  errors.rethrow();

  std::vector<ParticlePush> pushes;
  for (auto& list : per_contour) pushes.insert(pushes.end(), list.begin(), list.end());
  out.delta = average_pushes(input.mesh.vertex_count(), pushes);
  out.near_contour = particles_near_contours(input.mesh, hits);
  out.drop_opposing_proximity = true;
  // The push carries momentum: without it the scenes keep several times more intersecting pairs
  // and the tangled start takes much longer to come clean.
  out.carries_momentum = true;
  for (const Track& track : tracks_) {
    if (track.frames_without_shrinking >= stuck_frames) ++out.stuck_contours;
  }
  return out;
}

}  // namespace untangle

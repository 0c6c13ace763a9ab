#include "untangle/responses/ye.hpp"

#include <algorithm>
#include <cmath>

#include "untangle/responses/icm.hpp"

#include "../parallel_errors.hpp"

namespace untangle {
namespace {

Vec3 unit_triangle_normal(const ClothMesh& mesh, const Positions& x, Index t) {
  const auto& c = mesh.triangles[t];
  const Vec3 n = (x[c[1]] - x[c[0]]).cross(x[c[2]] - x[c[0]]);
  const double length = n.norm();
  return length > 0 ? Vec3(n / length) : Vec3::Zero();
}

// The connected regions of the mesh once the contour's hit edges are cut: region[v] per vertex
// (kNoIndex for none yet), sizes per region. Only the regions touching a cut edge are labelled;
// every other vertex stays unlabelled.
struct Regions {
  std::vector<Index> region;
  std::vector<std::size_t> sizes;
};

Regions regions_around_cut(const ClothMesh& mesh, const std::vector<std::uint8_t>& cut,
                           const std::vector<Index>& cut_edges) {
  Regions out;
  out.region.assign(mesh.vertex_count(), kNoIndex);
  std::vector<Index> queue;
  for (Index e : cut_edges) {
    for (Index seed : mesh.edges[e].vertices) {
      if (out.region[seed] != kNoIndex) continue;
      const auto label = static_cast<Index>(out.sizes.size());
      out.region[seed] = label;
      queue.assign(1, seed);
      for (std::size_t head = 0; head < queue.size(); ++head) {
        const Index v = queue[head];
        for (Index edge : mesh.vertex_edges[v]) {
          if (cut[edge]) continue;
          const auto& ends = mesh.edges[edge].vertices;
          const Index u = ends[0] == v ? ends[1] : ends[0];
          if (out.region[u] != kNoIndex) continue;
          out.region[u] = label;
          queue.push_back(u);
        }
      }
      out.sizes.push_back(queue.size());
    }
  }
  return out;
}

// Ring distance (0 = seed) inside `region`, up to `rings`; -1 beyond or outside.
std::vector<int> rings_from(const ClothMesh& mesh, const std::vector<std::uint8_t>& cut,
                            const Regions& regions, Index region, const std::vector<Index>& seeds,
                            int rings) {
  std::vector<int> distance(mesh.vertex_count(), -1);
  std::vector<Index> queue;
  for (Index s : seeds) {
    if (distance[s] < 0) {
      distance[s] = 0;
      queue.push_back(s);
    }
  }
  for (std::size_t head = 0; head < queue.size(); ++head) {
    const Index v = queue[head];
    if (distance[v] >= rings) continue;
    for (Index edge : mesh.vertex_edges[v]) {
      if (cut[edge]) continue;
      const auto& ends = mesh.edges[edge].vertices;
      const Index u = ends[0] == v ? ends[1] : ends[0];
      if (distance[u] >= 0 || regions.region[u] != region) continue;
      distance[u] = distance[v] + 1;
      queue.push_back(u);
    }
  }
  return distance;
}

// The boundary response of one contour; false when its hit edges cut nothing off.
bool push_boundary(const ResponseInput& input, const Contour& contour, double h0,
                   std::vector<ParticlePush>& out) {
  const ClothMesh& mesh = input.mesh;
  const Positions& x = input.positions;
  const auto& hits = input.intersections.hits;

  std::vector<Index> cut_edges;
  for (Index h : contour.hits) cut_edges.push_back(hits[h].edge);
  std::sort(cut_edges.begin(), cut_edges.end());
  cut_edges.erase(std::unique(cut_edges.begin(), cut_edges.end()), cut_edges.end());
  std::vector<std::uint8_t> cut(mesh.edges.size(), 0);
  for (Index e : cut_edges) cut[e] = 1;

  const Regions regions = regions_around_cut(mesh, cut, cut_edges);
  if (regions.sizes.size() < 2) return false;
  // The smallest region; on a tie the first labelled (deterministic: edge order).
  const auto smallest = static_cast<Index>(
      std::min_element(regions.sizes.begin(), regions.sizes.end()) - regions.sizes.begin());
  // A region equal in size to every other one cut off nothing smaller: nothing to pull back.
  if (regions.sizes[smallest] == *std::max_element(regions.sizes.begin(), regions.sizes.end())) {
    return false;
  }

  // One end of the contour: the first end whose hit edge touches the region, preferring an end
  // on the border (where the contour can be pulled off the cloth).
  std::vector<Index> seeds;
  const std::array<Index, 2> ends{contour.hits.front(), contour.hits.back()};
  for (int pass = 0; pass < 2 && seeds.empty(); ++pass) {
    for (Index h : ends) {
      if (pass == 0 && !mesh.edge_is_border[hits[h].edge]) continue;
      for (Index v : mesh.edges[hits[h].edge].vertices) {
        if (regions.region[v] == smallest) seeds.push_back(v);
      }
      if (!seeds.empty()) break;
    }
  }
  if (seeds.empty()) {
    for (Index e : cut_edges) {
      for (Index v : mesh.edges[e].vertices) {
        if (regions.region[v] == smallest) seeds.push_back(v);
      }
    }
  }
  const std::vector<int> ring = rings_from(mesh, cut, regions, smallest, seeds, YeResponse::kRings);

  // The triangles the region pierces near the end, and their mean normal.
  Vec3 normal = Vec3::Zero();
  Vec3 center = Vec3::Zero();
  std::vector<std::pair<Index, double>> pierced;  // triangle, fade of its edge's region end
  for (Index h : contour.hits) {
    const Hit& hit = hits[h];
    int nearest = -1;
    for (Index v : mesh.edges[hit.edge].vertices) {
      if (regions.region[v] == smallest && ring[v] >= 0) {
        nearest = nearest < 0 ? ring[v] : std::min(nearest, ring[v]);
      }
    }
    if (nearest < 0) continue;
    normal += unit_triangle_normal(mesh, x, hit.triangle);
    center += hit.point;
    pierced.push_back({hit.triangle, 1.0 - nearest / (YeResponse::kRings + 1.0)});
  }
  if (pierced.empty() || normal.norm() <= 0) return false;
  normal.normalize();
  center /= static_cast<double>(pierced.size());

  // The region is on one side of the pierced surface; it goes back through it.
  double side = 0;
  for (std::size_t v = 0; v < mesh.vertex_count(); ++v) {
    if (ring[v] >= 0) side += (x[v] - center).dot(normal);
  }
  const Vec3 back = (side >= 0 ? -1.0 : 1.0) * h0 * normal;
  for (std::size_t v = 0; v < mesh.vertex_count(); ++v) {
    if (ring[v] < 0 || input.inverse_mass[v] <= 0) continue;
    const double fade = 1.0 - ring[v] / (YeResponse::kRings + 1.0);
    out.push_back({static_cast<Index>(v), fade * back, 1.0});
  }
  for (const auto& [t, fade] : pierced) {
    for (Index v : mesh.triangles[t]) {
      if (regions.region[v] == smallest || input.inverse_mass[v] <= 0) continue;
      out.push_back({v, -fade * back, 1.0});
    }
  }
  return true;
}

// ICM's hit pushes for a contour moved by h (side 0 by +h relative to side 1).
void push_contour(const ResponseInput& input, const Contour& contour, const Vec3& h,
                  std::vector<ParticlePush>& out) {
  if (!h.allFinite() || h.isZero()) return;
  for (std::size_t k = 0; k < contour.hits.size(); ++k) {
    const Vec3 edge_move = contour.hit_edge_on_side0[k] ? h : Vec3(-h);
    push_hit(input.mesh, input.inverse_mass, input.intersections.hits[contour.hits[k]], edge_move,
             out);
  }
}

}  // namespace

Displacement YeResponse::compute(const ResponseInput& input) {
  Displacement out;
  uncut_boundaries_ = 0;
  const auto& contours = input.contours.contours;
  if (!input.settings.untangle || contours.empty()) return out;
  const double h0 = input.settings.response_strength * input.spacing;
  const IcmOptions icm;

  std::vector<std::vector<ParticlePush>> per_contour(contours.size());
  std::vector<std::uint8_t> uncut(contours.size(), 0);
  const auto contour_count = static_cast<std::ptrdiff_t>(contours.size());
  ParallelErrors errors;
#pragma omp parallel for schedule(dynamic, 1)
  for (std::ptrdiff_t ci = 0; ci < contour_count; ++ci) {
    errors.run([&] {
      const Contour& contour = contours[ci];
      if (contour.type == ContourType::kBoundary) {
        if (push_boundary(input, contour, h0, per_contour[ci])) return;
        uncut[ci] = 1;
      }
      const Vec3 d = contour_gradient(input.mesh, input.positions, input.intersections, contour,
                                      icm.normal_term);
      const double length = d.norm();
      if (length <= 0) return;
      const bool as_icm = contour.type == ContourType::kLoop;
      const Vec3 h = as_icm ? Vec3(h0 * d / std::sqrt(d.squaredNorm() + icm.g0 * icm.g0))
                            : Vec3(h0 * d / length);
      push_contour(input, contour, h, per_contour[ci]);
    });
  }
  errors.rethrow();

  std::vector<ParticlePush> pushes;
  for (auto& list : per_contour) pushes.insert(pushes.end(), list.begin(), list.end());
  for (std::uint8_t u : uncut) uncut_boundaries_ += u;
  out.delta = average_pushes(input.mesh.vertex_count(), pushes);
  out.near_contour = particles_near_contours(input.mesh, input.intersections);
  for (const ParticlePush& push : pushes) out.near_contour[push.particle] = 1;
  out.drop_opposing_proximity = true;  // ICM's proximity rule
  return out;
}

}  // namespace untangle

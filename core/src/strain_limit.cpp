#include "untangle/strain_limit.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "untangle/colouring.hpp"

namespace untangle {
namespace {

// The Gauss-Seidel sweeps at the end of each iteration: more than one, since the pushes of one
// iteration pile up where layers cross.
constexpr int kLimitSweeps = 3;

// The sweeps after a frame's iterations: at most this many, until no edge is more than
// kLimitTolerance beyond the limit.
constexpr int kFinalLimitSweeps = 1000;
constexpr double kLimitTolerance = 1e-4;
// The final sweeps are over-relaxed (SOR, omega = 1 + kFinalLimitOverRelaxation): plain
// Gauss-Seidel fixes a stretch spread over a long run of edges only a few edges per sweep
// (docs/untangler.md). A state within the limit is a fixed point of both, and the over-relaxed
// move stays within [low, high], so the result keeps the limit.
constexpr double kFinalLimitOverRelaxation = 0.5;

// Moves a and b apart or together (by their inverse masses) until their distance is within
// [low, high].
// over: the part of an edge's excess it is moved past its bound, toward the middle of [low, high]
// (successive over-relaxation; 0 = a plain projection onto the bound).
inline void limit_distance(Positions& x, const std::vector<double>& w, Index a, Index b, double low,
                           double high, double over) {
  const Vec3 d = x[b] - x[a];
  // Most edges are within their bounds after the first sweeps: no square root for those.
  const double squared = d.squaredNorm();
  if (squared >= low * low && squared <= high * high) return;
  const double weight = w[a] + w[b];
  if (weight <= 0) return;
  const double length = std::sqrt(squared);
  if (length < 1e-12) return;
  double target = std::clamp(length, low, high);
  if (target == length) return;
  target = std::clamp(target + over * (target - length), low, high);
  const Vec3 n = d * ((length - target) / (length * weight));
  x[a] += w[a] * n;
  x[b] -= w[b] * n;
}

}  // namespace

StrainLimit::StrainLimit(const ClothMesh& mesh) {
  std::vector<std::array<Index, 2>> particles;
  std::vector<double> rest;
  for (std::size_t e = 0; e < mesh.edges.size(); ++e) {
    const MeshEdge& edge = mesh.edges[e];
    if (mesh.edge_is_diagonal(edge)) continue;
    particles.push_back(edge.vertices);
    rest.push_back(mesh.rest_edge_lengths[e]);
  }
  const Colouring colouring = colour_constraints(particles, mesh.vertex_count());
  offsets_ = colouring.offsets;
  particles_.reserve(particles.size());
  rest_.reserve(particles.size());
  for (Index c : colouring.order) {
    particles_.push_back(particles[c]);
    rest_.push_back(rest[c]);
  }
}

void StrainLimit::update_rest(const Positions& rest) {
  for (std::size_t k = 0; k < particles_.size(); ++k) {
    const auto& [a, b] = particles_[k];
    rest_[k] = (rest[a] - rest[b]).norm();
  }
}

void StrainLimit::project(const std::vector<double>& w, double limit, Positions& x) const {
  for (int sweep = 0; sweep < kLimitSweeps; ++sweep) this->sweep(w, limit, x, 0);
}

// The iterations' sweeps leave some edges beyond the limit where pushes pile up: more sweeps
// until none is (within a rounding margin), so the frame's result keeps the limit.
void StrainLimit::finish(const std::vector<double>& w, double limit, Positions& x,
                         bool parallel) const {
  // An edge is beyond the limit by more than the tolerance when its length is outside
  // [low, high] times its rest length: compared squared, without a root or a division.
  const double low = std::max(1 - limit - kLimitTolerance, 0.0);
  const double high = 1 + limit + kLimitTolerance;
  for (int sweep = 0; sweep < kFinalLimitSweeps; ++sweep) {
    int beyond = 0;
#pragma omp parallel if (parallel)
    {
      this->sweep(w, limit, x, kFinalLimitOverRelaxation);
#pragma omp for schedule(static) reduction(max : beyond)
      for (std::ptrdiff_t k = 0; k < static_cast<std::ptrdiff_t>(rest_.size()); ++k) {
        const auto& [a, b] = particles_[k];
        const double rest = rest_[k];
        const double squared = (x[b] - x[a]).squaredNorm();
        if (rest > 0 && (squared < low * low * rest * rest || squared > high * high * rest * rest))
          beyond = 1;
      }
    }
    if (beyond == 0) break;
  }
}

// One Gauss-Seidel sweep over the polygon edges, colour by colour, over-relaxed by `over`
// (called from inside a thread team).
void StrainLimit::sweep(const std::vector<double>& w, double limit, Positions& x,
                        double over) const {
  const std::size_t colour_count = offsets_.empty() ? 0 : offsets_.size() - 1;
  for (std::size_t colour = 0; colour < colour_count; ++colour) {
    const std::ptrdiff_t begin = offsets_[colour];
    const std::ptrdiff_t end = offsets_[colour + 1];
#pragma omp for schedule(static)
    for (std::ptrdiff_t k = begin; k < end; ++k) {
      const double rest = rest_[k];
      limit_distance(x, w, particles_[k][0], particles_[k][1], (1 - limit) * rest,
                     (1 + limit) * rest, over);
    }
  }
}

}  // namespace untangle

// Test meshes for the detector and everything built on it: flat quad grids, and seeded
// "crumpled" grids folded through themselves and noised, with one or two pieces. Header-only;
// every function is a pure function of its arguments (same seed, same mesh, on any machine
// with the same standard library).
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <vector>

#include "untangle/mesh.hpp"

namespace untangle::test {

// A flat grid of nx x ny quads in the xy plane, corner at `origin`, (nx+1)(ny+1) vertices in
// row-major order (vertex i + j (nx+1) at origin + spacing (i, j, 0)). 2 nx ny triangles.
inline PolygonMesh grid(int nx, int ny, double spacing = 1.0, const Vec3& origin = Vec3::Zero()) {
  return quad_grid(static_cast<Index>(nx + 1), static_cast<Index>(ny + 1),
                   [&](Index i, Index j) { return Vec3(origin + spacing * Vec3(i, j, 0)); });
}

struct CrumpleOptions {
  int nx = 20, ny = 20;  // quads per side: 2 nx ny triangles per piece
  double spacing = 0.1;
  int folds = 2;       // rotations of part of the sheet around a line, by 150-210 degrees
  double wave = 1.5;   // amplitude of the smooth displacement field, in spacings
  double noise = 0.1;  // per-coordinate vertex jitter, in spacings
  std::uint64_t seed = 1;
};

namespace detail {

inline double uniform(std::mt19937_64& rng, double lo, double hi) {
  // Built from the raw 64-bit output (not a distribution), so the sequence is fully specified.
  const double unit = static_cast<double>(rng() >> 11) * 0x1.0p-53;
  return lo + (hi - lo) * unit;
}

inline Vec3 random_unit(std::mt19937_64& rng) {
  for (;;) {
    const Vec3 v(uniform(rng, -1, 1), uniform(rng, -1, 1), uniform(rng, -1, 1));
    const double n = v.norm();
    if (n > 0.1 && n <= 1) return v / n;
  }
}

// Rodrigues rotation of p around the line through c with unit direction a.
inline Vec3 rotate_about(const Vec3& p, const Vec3& c, const Vec3& a, double angle) {
  const Vec3 r = p - c;
  return c + r * std::cos(angle) + a.cross(r) * std::sin(angle) +
         a * a.dot(r) * (1 - std::cos(angle));
}

}  // namespace detail

// Folds, waves and noises the given positions in place (see CrumpleOptions). Each fold turns
// the part of the sheet on one side of a random line by more or less than a half turn, with the
// angle ramping up over a few spacings (a bent, not a broken, crease), so that the folded part
// passes through the rest once the waves are added.
inline void crumple(Positions& positions, const CrumpleOptions& options, std::mt19937_64& rng) {
  using detail::uniform;
  const double h = options.spacing;
  for (int f = 0; f < options.folds; ++f) {
    Vec3 lo = positions[0], hi = positions[0];
    for (const Vec3& p : positions) {
      lo = lo.cwiseMin(p);
      hi = hi.cwiseMax(p);
    }
    const Vec3 centre(uniform(rng, 0.3, 0.7), uniform(rng, 0.3, 0.7), uniform(rng, 0.3, 0.7));
    const Vec3 c = lo + centre.cwiseProduct(hi - lo);
    const Vec3 a = detail::random_unit(rng);
    Vec3 side = detail::random_unit(rng);
    side = (side - side.dot(a) * a).normalized();
    const double angle = uniform(rng, 150.0, 210.0) * std::numbers::pi / 180.0;
    const double bend = uniform(rng, 1.0, 3.0) * h;
    for (Vec3& p : positions) {
      const double d = (p - c).dot(side);
      if (d <= 0) continue;
      const double s = std::min(d / bend, 1.0);
      p = detail::rotate_about(p, c, a, angle * s * s * (3 - 2 * s));
    }
  }
  const double length = std::max(options.nx, options.ny) * h;
  for (int k = 0; k < 3; ++k) {
    const Vec3 direction = detail::random_unit(rng);
    const Vec3 frequency =
        detail::random_unit(rng) * (2 * std::numbers::pi / length) * uniform(rng, 1.0, 3.0);
    const double phase = uniform(rng, 0, 2 * std::numbers::pi);
    const double amplitude = options.wave * h * uniform(rng, 0.5, 1.0);
    for (Vec3& p : positions) p += amplitude * std::sin(frequency.dot(p) + phase) * direction;
  }
  for (Vec3& p : positions) {
    p += options.noise * h * Vec3(uniform(rng, -1, 1), uniform(rng, -1, 1), uniform(rng, -1, 1));
  }
}

// One crumpled grid (one piece).
inline PolygonMesh crumpled_grid(const CrumpleOptions& options) {
  std::mt19937_64 rng(options.seed);
  PolygonMesh mesh = grid(options.nx, options.ny, options.spacing);
  crumple(mesh.positions, options, rng);
  return mesh;
}

// `count` crumpled grids (pieces), each with its own seed, turned and shifted so that they
// overlap each other by about half their width: they cut through themselves and each other.
inline std::vector<PolygonMesh> crumpled_pieces(const CrumpleOptions& options, int count) {
  std::vector<PolygonMesh> pieces;
  std::mt19937_64 rng(options.seed);
  const double width = options.nx * options.spacing;
  for (int k = 0; k < count; ++k) {
    PolygonMesh mesh = grid(options.nx, options.ny, options.spacing);
    const double turn = 0.5 * k;
    const Vec3 shift(0.5 * width * k, 0.25 * width * k, 0.05 * width * k);
    for (Vec3& p : mesh.positions) {
      p = Vec3(std::cos(turn) * p.x() - std::sin(turn) * p.y(),
               std::sin(turn) * p.x() + std::cos(turn) * p.y(), p.z()) +
          shift;
    }
    crumple(mesh.positions, options, rng);
    pieces.push_back(std::move(mesh));
  }
  return pieces;
}

// All positions of the pieces in ClothMesh's global vertex order.
inline Positions concatenated_positions(const std::vector<PolygonMesh>& pieces) {
  Positions all;
  for (const PolygonMesh& piece : pieces) {
    all.insert(all.end(), piece.positions.begin(), piece.positions.end());
  }
  return all;
}

}  // namespace untangle::test

#include "untangle/scenes.hpp"

#include <cmath>
#include <numbers>

namespace untangle {
namespace {

// 1 inside |u| <= flat, falling smoothly (cosine) to 0 at |u| = flat + fade.
double plateau(double u, double flat, double fade) {
  const double a = std::abs(u);
  if (a <= flat) return 1;
  if (a >= flat + fade) return 0;
  const double s = (a - flat) / fade;
  return 0.5 * (1 + std::cos(std::numbers::pi * s));
}

}  // namespace

Scene tangled_start() {
  constexpr Index kSide = 50;
  constexpr double kSpacing = 0.1, kGap = 0.01;
  constexpr Index kFoldRow = 25;  // rows 25..49 are the folded lower half
  // The ridge across the folded half: rows around kRidgeRow pushed forward through the front half
  // by kRidgeHeight, over most of the width, fading out before the side borders.
  constexpr double kRidgeRow = 37, kRidgeRows = 2.0, kRidgeHeight = 0.06;
  constexpr double kRidgeFlat = 14, kRidgeFade = 5;
  const double centre = 0.5 * (kSide - 1);

  Scene scene;
  scene.name = "tangled-start";
  // Rest shape: a flat sheet hanging in the x-z plane, top row at z = 4.9.
  scene.pieces.push_back(quad_grid(kSide, kSide, [&](Index c, Index r) {
    return Vec3((c - centre) * kSpacing, 0, (kSide - 1 - r) * kSpacing);
  }));
  // Folded: the front half stays; row 25 hangs one spacing below row 24 at the layer gap behind,
  // so every edge keeps its rest length, and the rows above it climb back up behind the front.
  const double fold_z = (kSide - kFoldRow) * kSpacing;  // z of row 24
  const double drop = std::sqrt(kSpacing * kSpacing - kGap * kGap);
  scene.initial_positions = scene.pieces[0].positions;
  for (Index r = kFoldRow; r < kSide; ++r) {
    for (Index c = 0; c < kSide; ++c) {
      const double bump = std::exp(-std::pow((r - kRidgeRow) / kRidgeRows, 2)) *
                          plateau(c - centre, kRidgeFlat, kRidgeFade);
      scene.initial_positions[r * kSide + c] =
          Vec3((c - centre) * kSpacing, kGap - kRidgeHeight * bump,
               fold_z - drop + (r - kFoldRow) * kSpacing);
    }
  }
  scene.inverse_mass.assign(kSide * kSide, 1.0);
  for (Index c = 0; c < kSide; ++c) scene.inverse_mass[c] = 0;  // the top row
  scene.settings.gravity = Vec3::Zero();
  scene.settings.thickness = kGap;
  scene.settings.spacing = kSpacing;
  scene.grid_columns = kSide;
  return scene;
}

Scene dropped_cloth() {
  constexpr Index kSide = 40;
  constexpr double kSpacing = 0.145, kGap = 0.02;
  constexpr double kHeight = 2.6;        // of the sheet above the ground
  constexpr double kSphereRadius = 0.9;  // small beside the 5.7 m sheet
  constexpr double kSpin = 1.5;          // rad/s about the vertical axis
  const double centre = 0.5 * (kSide - 1);

  Scene scene;
  scene.name = "dropped-cloth";
  scene.pieces.push_back(quad_grid(kSide, kSide, [&](Index c, Index r) {
    return Vec3((c - centre) * kSpacing, (r - centre) * kSpacing, kHeight);
  }));
  for (const Vec3& p : scene.pieces[0].positions) {
    scene.initial_velocities.push_back(kSpin * Vec3(-p.y(), p.x(), 0));
  }
  scene.spheres.push_back({Vec3(0, 0, kSphereRadius), kSphereRadius});
  scene.ground_height = 0.0;
  scene.settings.thickness = kGap;
  scene.settings.spacing = kSpacing;
  scene.grid_columns = kSide;
  return scene;
}

Scene two_sheets() {
  constexpr Index kSide = 22;
  constexpr double kSpacing = 0.1, kGap = 0.02;
  constexpr double kHeight = 1.2, kAbove = 0.1;
  constexpr double kSphereRadius = 0.4;
  const double centre = 0.5 * (kSide - 1);
  const double turn = std::numbers::pi / 4;

  Scene scene;
  scene.name = "two-sheets";
  scene.pieces.push_back(quad_grid(kSide, kSide, [&](Index c, Index r) {
    return Vec3((c - centre) * kSpacing, (r - centre) * kSpacing, kHeight);
  }));
  scene.pieces.push_back(quad_grid(kSide, kSide, [&](Index c, Index r) {
    const double x = (c - centre) * kSpacing, y = (r - centre) * kSpacing;
    return Vec3(std::cos(turn) * x - std::sin(turn) * y, std::sin(turn) * x + std::cos(turn) * y,
                kHeight + kAbove);
  }));
  scene.spheres.push_back({Vec3(0, 0, kSphereRadius), kSphereRadius});
  scene.ground_height = 0.0;
  scene.settings.thickness = kGap;
  scene.settings.spacing = kSpacing;
  scene.grid_columns = kSide;
  return scene;
}

Scene make_scene(std::string_view name) {
  if (name == "tangled-start") return tangled_start();
  if (name == "dropped-cloth") return dropped_cloth();
  if (name == "two-sheets") return two_sheets();
  throw std::invalid_argument("unknown scene \"" + std::string(name) +
                              "\" (tangled-start, dropped-cloth, two-sheets)");
}

}  // namespace untangle

#include "untangle/scenes.hpp"

#include <array>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "untangle/portable_math.hpp"

namespace untangle {
namespace {

// Each scene's name, written once: its builder names the scene with it, and kScenes (below)
// lists it for scene_names() and make_scene().
constexpr std::string_view kTangledStart = "tangled-start";
constexpr std::string_view kDroppedCloth = "dropped-cloth";
constexpr std::string_view kTwoSheets = "two-sheets";

double square(double x) {
  return x * x;
}

// 1 inside |u| <= flat, falling smoothly (cosine) to 0 at |u| = flat + fade.
double plateau(double u, double flat, double fade) {
  const double a = std::abs(u);
  if (a <= flat) return 1;
  if (a >= flat + fade) return 0;
  const double s = (a - flat) / fade;
  return 0.5 * (1 + portable::cos_pi(s));
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
  scene.name = kTangledStart;
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
      const double bump = portable::exp(-square((r - kRidgeRow) / kRidgeRows)) *
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
  scene.name = kDroppedCloth;
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
  const double cos_turn = portable::cos_pi(0.25), sin_turn = portable::sin_pi(0.25);

  Scene scene;
  scene.name = kTwoSheets;
  scene.pieces.push_back(quad_grid(kSide, kSide, [&](Index c, Index r) {
    return Vec3((c - centre) * kSpacing, (r - centre) * kSpacing, kHeight);
  }));
  scene.pieces.push_back(quad_grid(kSide, kSide, [&](Index c, Index r) {
    const double x = (c - centre) * kSpacing, y = (r - centre) * kSpacing;
    return Vec3(cos_turn * x - sin_turn * y, sin_turn * x + cos_turn * y, kHeight + kAbove);
  }));
  scene.spheres.push_back({Vec3(0, 0, kSphereRadius), kSphereRadius});
  scene.ground_height = 0.0;
  scene.settings.thickness = kGap;
  scene.settings.spacing = kSpacing;
  scene.grid_columns = kSide;
  return scene;
}

namespace {

struct NamedScene {
  std::string_view name;
  Scene (*make)();
};

constexpr std::array<NamedScene, 3> kScenes{
    {{kTangledStart, tangled_start}, {kDroppedCloth, dropped_cloth}, {kTwoSheets, two_sheets}}};

constexpr auto kSceneNames = [] {
  std::array<std::string_view, kScenes.size()> names{};
  for (std::size_t i = 0; i < kScenes.size(); ++i) names[i] = kScenes[i].name;
  return names;
}();

}  // namespace

std::span<const std::string_view> scene_names() {
  return kSceneNames;
}

Scene make_scene(std::string_view name) {
  for (const NamedScene& scene : kScenes) {
    if (scene.name == name) return scene.make();
  }
  std::string known;
  for (const std::string_view scene_name : kSceneNames) {
    known += (known.empty() ? "" : ", ") + std::string(scene_name);
  }
  throw std::invalid_argument("unknown scene \"" + std::string(name) + "\" (" + known + ")");
}

namespace {

// SplitMix64 (Steele, Lea & Flood 2014): a fixed, portable sequence from one 64-bit seed.
std::uint64_t split_mix(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Uniform in [-1, 1), from the top 53 bits.
double symmetric_unit(std::uint64_t& state) {
  return static_cast<double>(split_mix(state) >> 11) * 0x1.0p-52 - 1;
}

double mean_edge_length(const Scene& scene) {
  double sum = 0;
  std::size_t count = 0;
  for (const PolygonMesh& piece : scene.pieces) {
    std::size_t corner = 0;
    for (const Index size : piece.face_sizes) {
      for (Index k = 0; k < size; ++k) {
        const Index a = piece.face_indices[corner + k];
        const Index b = piece.face_indices[corner + (k + 1) % size];
        sum += (piece.positions[a] - piece.positions[b]).norm();
        ++count;
      }
      corner += size;
    }
  }
  return count == 0 ? 0 : sum / static_cast<double>(count);
}

}  // namespace

void jitter_start(Scene& scene, std::uint64_t seed, double fraction) {
  if (seed == 0) return;
  if (scene.initial_positions.empty()) {
    for (const PolygonMesh& piece : scene.pieces) {
      scene.initial_positions.insert(scene.initial_positions.end(), piece.positions.begin(),
                                     piece.positions.end());
    }
  }
  const double spacing =
      scene.settings.spacing > 0 ? scene.settings.spacing : mean_edge_length(scene);
  const double amount = fraction * spacing;
  std::uint64_t state = seed;
  for (std::size_t v = 0; v < scene.initial_positions.size(); ++v) {
    const Vec3 offset(symmetric_unit(state), symmetric_unit(state), symmetric_unit(state));
    const bool pinned = v < scene.inverse_mass.size() && scene.inverse_mass[v] == 0;
    if (!pinned) scene.initial_positions[v] += amount * offset;
  }
}

}  // namespace untangle

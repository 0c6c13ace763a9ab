// Meshes and helpers for the C ABI tests, written against untangle.h only: quad grids mapped
// into space, RAII owners for the handles, and a hash of a float array.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "untangle.h"

namespace fixtures {

// One piece: packed xyz floats and quads (row-major cells: face r * cells_x + c).
struct Sheet {
  std::vector<float> positions;
  std::vector<std::uint32_t> face_sizes;
  std::vector<std::uint32_t> face_indices;
  std::size_t vertex_count() const { return positions.size() / 3; }
  std::size_t face_count() const { return face_sizes.size(); }
};

// A grid of (cells_x + 1) x (cells_y + 1) vertices; map takes (u, v) in [0, 1]^2.
inline Sheet grid(int cells_x, int cells_y,
                  const std::function<std::array<float, 3>(double, double)>& map) {
  Sheet sheet;
  for (int j = 0; j <= cells_y; ++j) {
    for (int i = 0; i <= cells_x; ++i) {
      const std::array<float, 3> p = map(double(i) / cells_x, double(j) / cells_y);
      sheet.positions.insert(sheet.positions.end(), p.begin(), p.end());
    }
  }
  const auto at = [&](int i, int j) { return static_cast<std::uint32_t>(j * (cells_x + 1) + i); };
  for (int j = 0; j < cells_y; ++j) {
    for (int i = 0; i < cells_x; ++i) {
      sheet.face_sizes.push_back(4);
      for (std::uint32_t v : {at(i, j), at(i + 1, j), at(i + 1, j + 1), at(i, j + 1)}) {
        sheet.face_indices.push_back(v);
      }
    }
  }
  return sheet;
}

// Sheet A: z = 0 over [-1, 1]^2 with 10 x 10 cells of 0.2.
inline Sheet horizontal_sheet() {
  return grid(10, 10, [](double u, double v) {
    return std::array<float, 3>{float(-1 + 2 * u), float(-1 + 2 * v), 0.0f};
  });
}

// Sheet B: the plane x = 0.05, y in [-0.55, 0.55] (5 cells of 0.22), z in [-0.97, 1.03]
// (10 cells of 0.2). It crosses A along x = 0.05, z = 0, |y| <= 0.55, with no hit exactly
// through a vertex or an edge: A's cells in column 5 (x in [0, 0.2]) and rows 2..7 are cut,
// and B's row 4 (z in [-0.17, 0.03]).
inline Sheet vertical_sheet() {
  return grid(5, 10, [](double u, double v) {
    return std::array<float, 3>{0.05f, float(-0.55 + 1.1 * u), float(-0.97 + 2.0 * v)};
  });
}

// Two pieces the untangler can resolve: a flat sheet (16 x 16 cells of 0.1 in z = 0, offset so
// no edge of the other piece passes exactly through its edges) and a square (8 x 8 cells of
// 0.1) turned by 45 degrees about z and tilted by 0.9 rad, whose lowest corner pokes 0.12
// through the first.
inline std::vector<Sheet> poking_corner(float lift = 0.0f) {
  Sheet flat = grid(16, 16, [](double u, double v) {
    return std::array<float, 3>{float(-0.8 + 1.6 * u + 0.0037), float(-0.8 + 1.6 * v + 0.0021),
                                0.0f};
  });
  const double c = std::sqrt(0.5), tilt = 0.9;
  Sheet tilted = grid(8, 8, [&](double u, double v) {
    u *= 0.8;
    v *= 0.8;
    return std::array<float, 3>{float((u - v) * c + 0.013),
                                float((u + v) * c * std::cos(tilt) - 0.3),
                                float((u + v) * c * std::sin(tilt) - 0.12 + lift)};
  });
  return {flat, tilted};
}

struct SceneDeleter {
  void operator()(UtScene* scene) const { ut_scene_destroy(scene); }
};
struct WorldDeleter {
  void operator()(UtWorld* world) const { ut_world_destroy(world); }
};
using ScenePtr = std::unique_ptr<UtScene, SceneDeleter>;
using WorldPtr = std::unique_ptr<UtWorld, WorldDeleter>;

inline UtStatus add(UtScene* scene, const Sheet& sheet, const float* inverse_mass = nullptr) {
  return ut_scene_add_piece(scene, sheet.positions.data(), sheet.vertex_count(), 0,
                            sheet.face_sizes.data(), sheet.face_count(), sheet.face_indices.data(),
                            sheet.face_indices.size(), inverse_mass);
}

// The positions of all sheets, in order.
inline std::vector<float> concatenated(const std::vector<Sheet>& sheets) {
  std::vector<float> all;
  for (const Sheet& sheet : sheets)
    all.insert(all.end(), sheet.positions.begin(), sheet.positions.end());
  return all;
}

// The same topology as `sheets` with the positions at `positions` (all sheets in order).
inline std::vector<Sheet> moved_to(std::vector<Sheet> sheets, const float* positions) {
  for (Sheet& sheet : sheets) {
    std::copy(positions, positions + sheet.positions.size(), sheet.positions.begin());
    positions += sheet.positions.size();
  }
  return sheets;
}

inline ScenePtr make_scene(const std::vector<Sheet>& sheets) {
  UtScene* raw = nullptr;
  EXPECT_EQ(ut_scene_create(&raw), UT_OK);
  ScenePtr scene(raw);
  for (const Sheet& sheet : sheets) EXPECT_EQ(add(scene.get(), sheet), UT_OK) << ut_last_error();
  return scene;
}

inline UtSettings default_settings() {
  UtSettings settings;
  EXPECT_EQ(ut_settings_init(&settings, sizeof settings), UT_OK);
  return settings;
}

// Gravity off: the tests look at the geometry the caller gave.
inline WorldPtr make_world(const std::vector<Sheet>& sheets) {
  ScenePtr scene = make_scene(sheets);
  UtSettings settings = default_settings();
  settings.gravity[2] = 0;
  UtWorld* raw = nullptr;
  EXPECT_EQ(ut_world_create(scene.get(), &settings, &raw), UT_OK) << ut_last_error();
  return WorldPtr(raw);
}

inline UtFrameStats stats_of(const UtWorld* world) {
  UtFrameStats stats;
  std::memset(&stats, 0, sizeof stats);
  stats.struct_size = sizeof stats;
  EXPECT_EQ(ut_world_stats(world, &stats), UT_OK) << ut_last_error();
  return stats;
}

inline std::vector<float> positions_of(const UtWorld* world, int32_t piece = UT_ALL_PIECES) {
  std::size_t count = 0;
  EXPECT_EQ(ut_world_vertex_count(world, piece, &count), UT_OK);
  std::vector<float> positions(3 * count);
  EXPECT_EQ(ut_world_get_positions(world, piece, positions.data(), count, 0), UT_OK)
      << ut_last_error();
  return positions;
}

// FNV-1a over the bytes: equal hashes of runs mean bit-identical states.
inline std::uint64_t hash_of(const std::vector<float>& values) {
  std::uint64_t hash = 1469598103934665603ull;
  const auto* bytes = reinterpret_cast<const unsigned char*>(values.data());
  for (std::size_t i = 0; i < values.size() * sizeof(float); ++i) {
    hash = (hash ^ bytes[i]) * 1099511628211ull;
  }
  return hash;
}

inline std::string last_error() {
  return ut_last_error();
}

}  // namespace fixtures

// libFuzzer target over the C ABI: builds scenes from fuzzed bytes (grids with fuzzed geometry,
// or free topology with fuzzed indices, sizes, NaN/Inf and absurd settings), then validates,
// detects, steps a world, reads every result back and untangles, through untangle.h only.
// It traps on anything the ABI promises never to do: an internal error, a status outside the
// enum, a failure without a message, a NaN in an output, an inconsistent query-then-fill.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "untangle.h"

namespace {

// Reads the fuzzer's bytes front to back; zeros once they run out.
class Bytes {
 public:
  Bytes(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::uint8_t byte() { return at_ < size_ ? data_[at_++] : 0; }
  std::int8_t signed_byte() { return static_cast<std::int8_t>(byte()); }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

void require(bool condition) {
  if (!condition) __builtin_trap();
}

// Every returned status: a known code, never internal or out of memory on these tiny inputs,
// and a non-empty message when it failed.
UtStatus checked(UtStatus status) {
  require(status >= UT_OK && status <= UT_ERROR_INTERNAL);
  require(status != UT_ERROR_INTERNAL && status != UT_ERROR_OUT_OF_MEMORY);
  if (status != UT_OK) require(ut_last_error() != nullptr && ut_last_error()[0] != '\0');
  return status;
}

void require_finite(const std::vector<float>& values) {
  for (float v : values) require(std::isfinite(v));
}

// Values chosen to hit the edges of the settings' ranges.
double pick(std::uint8_t b, std::initializer_list<double> table) {
  return *(table.begin() + b % table.size());
}

struct Piece {
  std::vector<float> positions;
  std::vector<std::uint32_t> sizes, indices;
};

// Coordinates on a 1/16 lattice: exact coincidences, collinear corners and hits exactly
// through vertices and edges are common, which is what breaks geometry code.
float coordinate(Bytes& in) {
  return static_cast<float>(in.signed_byte()) / 16.0f;
}

Piece grid_piece(Bytes& in) {
  Piece piece;
  const std::uint32_t w = 2 + in.byte() % 6, h = 2 + in.byte() % 6;
  const float spacing = 0.05f + static_cast<float>(in.byte() % 8) * 0.05f;
  for (std::uint32_t j = 0; j < h; ++j) {
    for (std::uint32_t i = 0; i < w; ++i) {
      piece.positions.push_back(static_cast<float>(i) * spacing + coordinate(in) / 8.0f);
      piece.positions.push_back(static_cast<float>(j) * spacing + coordinate(in) / 8.0f);
      piece.positions.push_back(coordinate(in) / 4.0f);
    }
  }
  const bool triangles = in.byte() & 1;
  for (std::uint32_t j = 0; j + 1 < h; ++j) {
    for (std::uint32_t i = 0; i + 1 < w; ++i) {
      const std::uint32_t a = j * w + i, b = a + 1, c = a + w + 1, d = a + w;
      if (triangles) {
        piece.sizes.insert(piece.sizes.end(), {3, 3});
        piece.indices.insert(piece.indices.end(), {a, b, c, a, c, d});
      } else {
        piece.sizes.push_back(4);
        piece.indices.insert(piece.indices.end(), {a, b, c, d});
      }
    }
  }
  return piece;
}

Piece free_piece(Bytes& in) {
  Piece piece;
  const std::uint32_t vertices = in.byte() % 40;
  for (std::uint32_t v = 0; v < 3 * vertices; ++v) piece.positions.push_back(coordinate(in));
  const std::uint32_t faces = in.byte() % 40;
  for (std::uint32_t f = 0; f < faces; ++f) {
    const std::uint8_t s = in.byte();
    const std::uint32_t size = s == 0xFF ? 2 : s == 0xFE ? 0 : 3 + s % 4;
    piece.sizes.push_back(size);
    for (std::uint32_t k = 0; k < size; ++k) {
      const std::uint8_t b = in.byte();
      // Mostly in range; now and then just past the end or far out.
      const std::uint32_t index = b < 248 || vertices == 0 ? (vertices ? b % vertices : b)
                                  : b < 252                ? vertices + (b - 248)
                                                           : 0xFFFFFFF0u + b;
      piece.indices.push_back(index);
    }
  }
  return piece;
}

void spoil(Bytes& in, Piece& piece) {
  const std::uint8_t what = in.byte();
  if (piece.positions.empty()) return;
  const std::size_t at = in.byte() % piece.positions.size();
  if (what == 0xFD) piece.positions[at] = NAN;
  if (what == 0xFC) piece.positions[at] = INFINITY;
  if (what == 0xFB) piece.positions[at] = 3e38f;
}

int32_t progress(void* user_data, int32_t done, int32_t total, uint64_t /*pairs*/) {
  require(done >= 0 && total >= 0);
  const auto stop_at = *static_cast<int32_t*>(user_data);
  return done >= stop_at ? 0 : 1;
}

void exercise_world(Bytes& in, UtWorld* world, std::size_t face_count_total) {
  size_t vertices = 0, pieces = 0;
  require(checked(ut_world_vertex_count(world, UT_ALL_PIECES, &vertices)) == UT_OK);
  require(checked(ut_world_piece_count(world, &pieces)) == UT_OK);
  const std::uint32_t frames = in.byte() % 3;
  checked(ut_world_step(world, frames));
  checked(ut_world_detect(world));

  std::vector<float> positions(3 * vertices);
  require(checked(ut_world_get_positions(world, UT_ALL_PIECES, positions.data(), vertices, 0)) ==
          UT_OK);
  require_finite(positions);

  size_t point_count = 0, contour_count = 0;
  require(checked(ut_world_contours(world, nullptr, 0, &point_count, nullptr, nullptr, 0,
                                    &contour_count)) == UT_OK);
  std::vector<float> points(3 * point_count);
  std::vector<std::uint32_t> offsets(contour_count + 1);
  std::vector<std::uint8_t> types(contour_count);
  require(checked(ut_world_contours(world, points.data(), point_count, &point_count, offsets.data(),
                                    types.data(), contour_count, &contour_count)) == UT_OK);
  require_finite(points);
  require(offsets.front() == 0 && offsets.back() == point_count);
  for (std::size_t c = 0; c < contour_count; ++c) {
    require(offsets[c] <= offsets[c + 1] && types[c] <= 2);
  }

  size_t boxes = 0;
  require(checked(ut_world_culled_boxes(world, nullptr, 0, &boxes)) == UT_OK);
  std::vector<float> box_data(6 * boxes);
  require(checked(ut_world_culled_boxes(world, box_data.data(), boxes, &boxes)) == UT_OK);
  require_finite(box_data);

  std::size_t faces_seen = 0;
  for (std::int32_t p = 0; p < static_cast<std::int32_t>(pieces); ++p) {
    size_t face_count = 0, index_count = 0, hit_count = 0;
    require(checked(ut_world_piece_faces(world, p, nullptr, 0, &face_count, nullptr, 0,
                                         &index_count)) == UT_OK);
    faces_seen += face_count;
    require(checked(ut_world_intersecting_faces(world, p, nullptr, 0, &hit_count)) == UT_OK);
    std::vector<std::uint32_t> hits(hit_count);
    require(checked(ut_world_intersecting_faces(world, p, hits.data(), hits.size(), &hit_count)) ==
            UT_OK);
    for (std::size_t k = 0; k < hits.size(); ++k) {
      require(hits[k] < face_count && (k == 0 || hits[k - 1] < hits[k]));
    }
  }
  require(faces_seen == face_count_total);

  UtFrameStats stats;
  stats.struct_size = sizeof stats;
  require(checked(ut_world_stats(world, &stats)) == UT_OK);
  require(std::isfinite(stats.max_edge_strain) && std::isfinite(stats.kinetic_energy));

  const float origin[3] = {coordinate(in), coordinate(in), 4.0f};
  const float direction[3] = {coordinate(in), coordinate(in), -1.0f};
  std::uint32_t particle = 0;
  if (checked(ut_world_grab_begin(world, origin, direction, 0.05f + in.byte() / 64.0f,
                                  &particle)) == UT_OK) {
    require(particle == UT_NO_PARTICLE || particle < vertices);
    const float target[3] = {coordinate(in), coordinate(in), coordinate(in)};
    const float normal[3] = {coordinate(in), coordinate(in), coordinate(in)};
    const UtStatus moved = checked(ut_world_grab_move(world, target, normal));
    require(particle != UT_NO_PARTICLE || moved != UT_OK);
    checked(ut_world_step(world, 1));
    checked(ut_world_grab_end(world));
  }

  // Set a perturbed copy (maybe spoiled) and read it back when it was accepted.
  for (float& x : positions) x += coordinate(in) / 64.0f;
  if (in.byte() == 0xEE && !positions.empty()) positions[0] = NAN;
  if (checked(ut_world_set_positions(world, UT_ALL_PIECES, positions.data(), vertices, 0)) ==
      UT_OK) {
    std::vector<float> back(positions.size());
    require(checked(ut_world_get_positions(world, UT_ALL_PIECES, back.data(), vertices, 0)) ==
            UT_OK);
    require(back == positions);
    checked(ut_world_step(world, 1));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Bytes in(data, size);
  const std::uint8_t flags = in.byte();
  const std::uint8_t method = in.byte();
  checked(ut_set_threads(1 + in.byte() % 2));

  UtSettings settings;
  require(checked(ut_settings_init(&settings, sizeof settings)) == UT_OK);
  settings.method = method % 5;  // 4 is not a method
  settings.untangle = (flags >> 6) & 1;
  settings.cull = (flags >> 5) & 1;
  settings.thickness = pick(in.byte(), {0.01, 0.0, 0.05, 0.2, -1.0, 1e9, NAN});
  settings.response_strength = pick(in.byte(), {1.0, 0.0, 4.0, 50.0, -2.0, INFINITY});
  settings.iterations = pick(in.byte(), {10, 1, 3, 0, -5});
  if (flags & 0x80) settings.struct_size = static_cast<std::uint32_t>(offsetof(UtSettings, cull));

  UtScene* scene = nullptr;
  require(checked(ut_scene_create(&scene)) == UT_OK);
  const int piece_count = 1 + (flags & 1);
  std::size_t total_vertices = 0, total_faces = 0;
  std::vector<Piece> pieces;
  for (int p = 0; p < piece_count; ++p) {
    Piece piece = (flags & 2) ? free_piece(in) : grid_piece(in);
    spoil(in, piece);
    std::vector<float> inverse_mass;
    if (flags & 4) {
      for (std::size_t v = 0; v < piece.positions.size() / 3; ++v) {
        const std::uint8_t b = in.byte();
        inverse_mass.push_back(b == 0xFF ? -1.0f : static_cast<float>(b % 3) * 0.5f);
      }
    }
    const UtStatus added = checked(ut_scene_add_piece(
        scene, piece.positions.data(), piece.positions.size() / 3, 0, piece.sizes.data(),
        piece.sizes.size(), piece.indices.data(), piece.indices.size(),
        inverse_mass.empty() ? nullptr : inverse_mass.data()));
    if (added == UT_OK) {
      total_vertices += piece.positions.size() / 3;
      total_faces += piece.sizes.size();
      pieces.push_back(std::move(piece));
    }
  }
  if (flags & 8) {
    const float center[3] = {coordinate(in), coordinate(in), coordinate(in) - 1.0f};
    checked(ut_scene_add_sphere(scene, center, coordinate(in)));
  }
  if (flags & 16) checked(ut_scene_set_ground(scene, coordinate(in) - 2.0f));

  const UtStatus valid = checked(ut_scene_validate(scene));

  UtFrameStats stats;
  stats.struct_size = sizeof stats;
  std::vector<std::uint8_t> polygon_flags(total_faces, 0xAA);
  const UtStatus detected =
      checked(ut_detect(scene, &settings, &stats, polygon_flags.data(), polygon_flags.size()));
  if (detected == UT_OK) {
    require(valid == UT_OK);
    std::size_t flagged = 0;
    for (std::uint8_t f : polygon_flags) {
      require(f <= 1);
      flagged += f;
    }
    require((flagged == 0) == (stats.pairs == 0));
  }

  UtWorld* world = nullptr;
  if (checked(ut_world_create(scene, &settings, &world)) == UT_OK) {
    require(valid == UT_OK);
    exercise_world(in, world, total_faces);
  } else {
    require(world == nullptr);
    require(checked(ut_world_step(world, 1)) == UT_ERROR_INVALID_ARGUMENT);
  }
  ut_world_destroy(world);

  if (valid == UT_OK && (flags & 0x40)) {
    UtUntangleOptions options;
    require(checked(ut_untangle_options_init(&options, sizeof options)) == UT_OK);
    options.max_iterations = 1 + in.byte() % 4;
    int32_t stop_at = in.byte() % 6;
    std::vector<float> output(3 * total_vertices, NAN);
    UtUntangleReport report;
    report.struct_size = sizeof report;
    const UtStatus untangled =
        checked(ut_untangle(scene, &settings, &options, nullptr, output.data(), total_vertices,
                            &report, progress, &stop_at));
    if (untangled == UT_OK || untangled == UT_ERROR_CANCELLED) {
      require_finite(output);
      require(report.iterations <= options.max_iterations);
    }
    // Two frames: the input and a shifted copy.
    std::vector<float> frames;
    for (const Piece& piece : pieces)
      frames.insert(frames.end(), piece.positions.begin(), piece.positions.end());
    const std::size_t frame_size = frames.size();
    for (std::size_t k = 0; k < frame_size; ++k)
      frames.push_back(frames[k] + (k % 3 == 2 ? 0.01f : 0.0f));
    std::vector<float> out(frames.size(), NAN);
    size_t done = 0;
    stop_at = 1 + in.byte() % 3;
    const UtStatus sequence =
        checked(ut_untangle_sequence(scene, &settings, &options, frames.data(), 2, total_vertices,
                                     out.data(), nullptr, &done, progress, &stop_at));
    if (sequence == UT_OK || sequence == UT_ERROR_CANCELLED) {
      require(done <= 2 && (sequence == UT_ERROR_CANCELLED || done == 2));
      require_finite(std::vector<float>(
          out.begin(), out.begin() + static_cast<std::ptrdiff_t>(done * frame_size)));
    }
  }
  ut_scene_destroy(scene);
  return 0;
}

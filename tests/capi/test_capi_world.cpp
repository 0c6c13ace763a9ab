// A world through the C ABI: what the add-on reads back after detect and step (contours,
// intersecting faces, culled boxes, positions, topology, colliders, grab) checked against
// hand-built configurations, and a run that does not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "fixtures.hpp"

using namespace fixtures;

namespace {

struct ContourData {
  std::vector<float> points;
  std::vector<std::uint32_t> offsets;
  std::vector<std::uint8_t> types;
};

ContourData contours_of(const UtWorld* world) {
  std::size_t point_count = 0, contour_count = 0;
  EXPECT_EQ(ut_world_contours(world, nullptr, 0, &point_count, nullptr, nullptr, 0, &contour_count),
            UT_OK);
  ContourData data;
  data.points.resize(3 * point_count);
  data.offsets.resize(contour_count + 1);
  data.types.resize(contour_count);
  EXPECT_EQ(
      ut_world_contours(world, data.points.data(), point_count, &point_count, data.offsets.data(),
                        data.types.data(), contour_count, &contour_count),
      UT_OK)
      << ut_last_error();
  return data;
}

std::vector<std::uint32_t> intersecting_faces(const UtWorld* world, int32_t piece) {
  std::size_t count = 0;
  EXPECT_EQ(ut_world_intersecting_faces(world, piece, nullptr, 0, &count), UT_OK);
  std::vector<std::uint32_t> faces(count);
  EXPECT_EQ(ut_world_intersecting_faces(world, piece, faces.data(), faces.size(), &count), UT_OK);
  return faces;
}

}  // namespace

// Property: two sheets crossing at right angles give one open contour of boundary type along
// the line x = 0.05, z = 0, from y = -0.55 to 0.55 (both ends on B's border).
TEST(CapiWorld, CrossingSheetsGiveOneBoundaryContourAlongTheCrossingLine) {
  WorldPtr world = make_world({horizontal_sheet(), vertical_sheet()});
  ASSERT_EQ(ut_world_detect(world.get()), UT_OK) << last_error();
  const UtFrameStats stats = stats_of(world.get());
  EXPECT_EQ(stats.contours_loop, 0u);
  EXPECT_EQ(stats.contours_boundary, 1u);
  EXPECT_EQ(stats.contours_crease, 0u);
  EXPECT_GT(stats.pairs, 0u);
  EXPECT_EQ(stats.triangles, 2u * (100 + 50));

  const ContourData contours = contours_of(world.get());
  ASSERT_EQ(contours.types.size(), 1u);
  EXPECT_EQ(contours.types[0], 1u);  // boundary
  EXPECT_EQ(contours.offsets.front(), 0u);
  EXPECT_EQ(contours.offsets.back(), contours.points.size() / 3);
  float low = 1e9f, high = -1e9f;
  for (std::size_t i = 0; i < contours.points.size(); i += 3) {
    EXPECT_NEAR(contours.points[i], 0.05f, 1e-6f);
    EXPECT_NEAR(contours.points[i + 2], 0.0f, 1e-6f);
    low = std::min(low, contours.points[i + 1]);
    high = std::max(high, contours.points[i + 1]);
  }
  EXPECT_NEAR(low, -0.55f, 1e-5f);
  EXPECT_NEAR(high, 0.55f, 1e-5f);
  // Walking order: y is monotone along the polyline (it is a straight line).
  const bool increasing = contours.points[4] > contours.points[1];
  for (std::size_t i = 3; i < contours.points.size(); i += 3) {
    EXPECT_EQ(contours.points[i + 1] > contours.points[i - 2], increasing) << "point " << i / 3;
  }
}

// Property: the intersecting input polygons are exactly the cells the crossing line passes
// through: A's column 5, rows 2..7; B's row 4, all 5 columns (see fixtures.hpp).
TEST(CapiWorld, IntersectingFacesAreTheCellsTheCrossingLinePasses) {
  WorldPtr world = make_world({horizontal_sheet(), vertical_sheet()});
  ASSERT_EQ(ut_world_detect(world.get()), UT_OK);
  std::vector<std::uint32_t> expected_a, expected_b;
  for (std::uint32_t row = 2; row <= 7; ++row) expected_a.push_back(row * 10 + 5);
  for (std::uint32_t column = 0; column < 5; ++column) expected_b.push_back(4 * 5 + column);
  EXPECT_EQ(intersecting_faces(world.get(), 0), expected_a);
  EXPECT_EQ(intersecting_faces(world.get(), 1), expected_b);
}

// Property: a flat sheet cannot intersect itself, and the culled boxes are volumes of the
// sheet: as many as the stats count, each a proper box within the sheet's bounds grown by the
// thickness.
TEST(CapiWorld, FlatSheetCulledBoxesLieOnTheSheet) {
  WorldPtr world = make_world({horizontal_sheet()});
  ASSERT_EQ(ut_world_detect(world.get()), UT_OK);
  const UtFrameStats stats = stats_of(world.get());
  EXPECT_EQ(stats.pairs, 0u);
  std::size_t count = 0;
  ASSERT_EQ(ut_world_culled_boxes(world.get(), nullptr, 0, &count), UT_OK);
  ASSERT_EQ(count, stats.culled_nodes);
  ASSERT_GE(count, 1u);
  std::vector<float> boxes(6 * count);
  ASSERT_EQ(ut_world_culled_boxes(world.get(), boxes.data(), count, &count), UT_OK);
  const float grow = 0.01f + 1e-6f;  // the default thickness
  const float low[3] = {-1 - grow, -1 - grow, -grow}, high[3] = {1 + grow, 1 + grow, grow};
  for (std::size_t b = 0; b < count; ++b) {
    for (int k = 0; k < 3; ++k) {
      EXPECT_LE(boxes[6 * b + k], boxes[6 * b + 3 + k]);
      EXPECT_GE(boxes[6 * b + k], low[k]);
      EXPECT_LE(boxes[6 * b + 3 + k], high[k]);
    }
  }
}

// Property: set_positions of one piece with a byte stride changes exactly that piece, and the
// floats come back bit for bit (float -> double -> float is exact).
TEST(CapiWorld, PositionsOfOnePieceWithStrideRoundTrip) {
  const Sheet a = horizontal_sheet(), b = vertical_sheet();
  WorldPtr world = make_world({a, b});
  struct Padded {
    float xyz[3];
    float pad;
  };
  std::vector<Padded> moved(b.vertex_count());
  for (std::size_t v = 0; v < moved.size(); ++v) {
    for (int k = 0; k < 3; ++k) moved[v].xyz[k] = b.positions[3 * v + k] + 0.125f * float(k + 1);
    moved[v].pad = NAN;  // must not be read
  }
  ASSERT_EQ(ut_world_set_positions(world.get(), 1, moved[0].xyz, moved.size(), sizeof(Padded)),
            UT_OK)
      << last_error();
  const std::vector<float> all = positions_of(world.get());
  ASSERT_EQ(all.size(), a.positions.size() + b.positions.size());
  EXPECT_TRUE(std::equal(a.positions.begin(), a.positions.end(), all.begin()));
  for (std::size_t v = 0; v < moved.size(); ++v) {
    for (int k = 0; k < 3; ++k) EXPECT_EQ(all[a.positions.size() + 3 * v + k], moved[v].xyz[k]);
  }
  // Reading one piece with a stride writes only the xyz of each row.
  std::vector<Padded> read(b.vertex_count(), Padded{{0, 0, 0}, 7.0f});
  ASSERT_EQ(ut_world_get_positions(world.get(), 1, read[0].xyz, read.size(), sizeof(Padded)),
            UT_OK);
  for (std::size_t v = 0; v < read.size(); ++v) {
    EXPECT_EQ(read[v].pad, 7.0f);
    for (int k = 0; k < 3; ++k) EXPECT_EQ(read[v].xyz[k], moved[v].xyz[k]);
  }
}

// Property: the input polygons of each piece come back unchanged (the engine triangulates
// internally; the add-on needs the polygons).
TEST(CapiWorld, PieceFacesAreTheInputPolygons) {
  const Sheet a = horizontal_sheet(), b = vertical_sheet();
  WorldPtr world = make_world({a, b});
  size_t piece_count = 0;
  ASSERT_EQ(ut_world_piece_count(world.get(), &piece_count), UT_OK);
  ASSERT_EQ(piece_count, 2u);
  const Sheet* sheets[] = {&a, &b};
  for (int32_t piece = 0; piece < 2; ++piece) {
    std::size_t face_count = 0, index_count = 0;
    ASSERT_EQ(
        ut_world_piece_faces(world.get(), piece, nullptr, 0, &face_count, nullptr, 0, &index_count),
        UT_OK);
    std::vector<std::uint32_t> sizes(face_count), indices(index_count);
    ASSERT_EQ(ut_world_piece_faces(world.get(), piece, sizes.data(), sizes.size(), &face_count,
                                   indices.data(), indices.size(), &index_count),
              UT_OK);
    EXPECT_EQ(sizes, sheets[piece]->face_sizes);
    EXPECT_EQ(indices, sheets[piece]->face_indices);
    std::size_t vertices = 0;
    ASSERT_EQ(ut_world_vertex_count(world.get(), piece, &vertices), UT_OK);
    EXPECT_EQ(vertices, sheets[piece]->vertex_count());
  }
}

// Property: settings set through the ABI are the settings read back.
TEST(CapiWorld, SettingsRoundTrip) {
  WorldPtr world = make_world({horizontal_sheet()});
  UtSettings settings = default_settings();
  settings.method = UT_METHOD_YE;
  settings.response_strength = 2.5;
  settings.thickness = 0.02;
  settings.iterations = 7;
  settings.untangle = 0;
  settings.gravity[0] = 1.5;
  ASSERT_EQ(ut_world_set_settings(world.get(), &settings), UT_OK) << last_error();
  UtSettings read;
  read.struct_size = sizeof read;
  ASSERT_EQ(ut_world_get_settings(world.get(), &read), UT_OK);
  EXPECT_EQ(read.method, UT_METHOD_YE);
  EXPECT_EQ(read.response_strength, 2.5);
  EXPECT_EQ(read.thickness, 0.02);
  EXPECT_EQ(read.iterations, 7);
  EXPECT_EQ(read.untangle, 0);
  EXPECT_EQ(read.gravity[0], 1.5);
}

// Property: the colliders given to the scene are the colliders the world reports.
TEST(CapiWorld, CollidersComeBack) {
  ScenePtr scene = make_scene({horizontal_sheet()});
  const float center[3] = {0.5f, -0.25f, -2.0f};
  ASSERT_EQ(ut_scene_add_sphere(scene.get(), center, 0.75f), UT_OK);
  ASSERT_EQ(ut_scene_set_ground(scene.get(), -3.0f), UT_OK);
  UtWorld* raw = nullptr;
  ASSERT_EQ(ut_world_create(scene.get(), nullptr, &raw), UT_OK) << last_error();
  WorldPtr world(raw);
  scene.reset();  // the world holds its own copy
  std::size_t count = 0;
  int32_t has_ground = 0;
  float ground = 0, spheres[4] = {0, 0, 0, 0};
  ASSERT_EQ(ut_world_colliders(world.get(), spheres, 1, &count, &has_ground, &ground), UT_OK);
  EXPECT_EQ(count, 1u);
  EXPECT_EQ(has_ground, 1);
  EXPECT_EQ(ground, -3.0f);
  EXPECT_EQ(spheres[0], 0.5f);
  EXPECT_EQ(spheres[1], -0.25f);
  EXPECT_EQ(spheres[2], -2.0f);
  EXPECT_EQ(spheres[3], 0.75f);
}

// Property: a ray straight down onto a vertex picks that vertex; dragging it pulls it toward
// the target; ending the grab is accepted, and ending none is fine too.
TEST(CapiWorld, GrabPicksTheVertexUnderTheRayAndPullsIt) {
  WorldPtr world = make_world({horizontal_sheet()});
  const std::uint32_t vertex = 6 * 11 + 3;  // (i, j) = (3, 6): x = -0.4, y = 0.2
  const float origin[3] = {-0.4f, 0.2f, 5.0f}, down[3] = {0, 0, -1};
  std::uint32_t particle = 0;
  ASSERT_EQ(ut_world_grab_begin(world.get(), origin, down, 0.05f, &particle), UT_OK)
      << last_error();
  EXPECT_EQ(particle, vertex);
  const float target[3] = {-0.4f, 0.2f, 0.5f}, normal[3] = {1, 0, 0};
  ASSERT_EQ(ut_world_grab_move(world.get(), target, normal), UT_OK) << last_error();
  ASSERT_EQ(ut_world_step(world.get(), 5), UT_OK) << last_error();
  const std::vector<float> after = positions_of(world.get());
  EXPECT_GT(after[3 * vertex + 2], 0.05f);
  ASSERT_EQ(ut_world_grab_end(world.get()), UT_OK);
  ASSERT_EQ(ut_world_grab_end(world.get()), UT_OK);
  const float away[3] = {50, 50, 5};
  ASSERT_EQ(ut_world_grab_begin(world.get(), away, down, 0.05f, &particle), UT_OK);
  EXPECT_EQ(particle, UT_NO_PARTICLE);
}

// Property: stepping a built-in scene gives bit-identical states for 1 and 2 threads.
TEST(CapiWorld, SceneRunDoesNotDependOnTheThreadCount) {
  std::uint64_t hashes[2] = {0, 0};
  for (int32_t threads : {1, 2}) {
    UtSettings settings;
    settings.struct_size = sizeof settings;
    ASSERT_EQ(ut_scene_settings("tangled-start", &settings), UT_OK);
    settings.threads = threads;
    UtWorld* raw = nullptr;
    ASSERT_EQ(ut_world_create_scene("tangled-start", &settings, &raw), UT_OK) << last_error();
    WorldPtr world(raw);
    const std::vector<float> start = positions_of(world.get());
    ASSERT_EQ(ut_world_step(world.get(), 12), UT_OK) << last_error();
    const std::vector<float> end = positions_of(world.get());
    EXPECT_NE(hash_of(start), hash_of(end)) << "the scene should move";
    hashes[threads - 1] = hash_of(end);
  }
  EXPECT_EQ(hashes[0], hashes[1]);
}

// Seed 0 is the plain scene; another seed jitters the start (by far less than a float of the
// positions shows, so the difference is looked for a few frames later) the same way each time.
TEST(CapiWorld, SeededScenesJitterTheStartReproducibly) {
  auto after_frames = [](std::uint64_t seed) {
    UtWorld* raw = nullptr;
    EXPECT_EQ(ut_world_create_scene_seeded("tangled-start", nullptr, seed, &raw), UT_OK)
        << last_error();
    WorldPtr world(raw);
    EXPECT_EQ(ut_world_step(world.get(), 5), UT_OK) << last_error();
    return hash_of(positions_of(world.get()));
  };
  UtWorld* raw = nullptr;
  ASSERT_EQ(ut_world_create_scene("tangled-start", nullptr, &raw), UT_OK) << last_error();
  WorldPtr plain(raw);
  ASSERT_EQ(ut_world_step(plain.get(), 5), UT_OK);
  EXPECT_EQ(after_frames(0), hash_of(positions_of(plain.get())));
  EXPECT_EQ(after_frames(7), after_frames(7));
  EXPECT_NE(after_frames(7), after_frames(0));
  UtWorld* none = reinterpret_cast<UtWorld*>(1);
  EXPECT_EQ(ut_world_create_scene_seeded(nullptr, nullptr, 1, &none), UT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(none, nullptr);
}

// Property: the built-in scenes have the sizes the SPEC gives them.
TEST(CapiWorld, BuiltInScenesHaveTheirSpecSizes) {
  const struct {
    const char* name;
    std::size_t pieces, vertices;
  } scenes[] = {{"tangled-start", 1, 2500}, {"dropped-cloth", 1, 1600}, {"two-sheets", 2, 968}};
  for (const auto& scene : scenes) {
    UtWorld* raw = nullptr;
    ASSERT_EQ(ut_world_create_scene(scene.name, nullptr, &raw), UT_OK) << last_error();
    WorldPtr world(raw);
    std::size_t pieces = 0, vertices = 0;
    ASSERT_EQ(ut_world_piece_count(world.get(), &pieces), UT_OK);
    ASSERT_EQ(ut_world_vertex_count(world.get(), UT_ALL_PIECES, &vertices), UT_OK);
    EXPECT_EQ(pieces, scene.pieces) << scene.name;
    EXPECT_EQ(vertices, scene.vertices) << scene.name;
  }
}

// Bad input through the C ABI: every row of the table gives its documented status, a
// message that names the problem, and leaves the scene or world as it was. Run under ASan by
// the sanitize preset, so a crash or a leak on any of these paths fails too.
#include <cmath>
#include <limits>

#include "fixtures.hpp"

using namespace fixtures;
using ::testing::HasSubstr;

namespace {

// A single triangle piece with the given corners (local indices).
UtStatus add_triangles(UtScene* scene, const std::vector<float>& positions,
                       const std::vector<std::uint32_t>& sizes,
                       const std::vector<std::uint32_t>& indices) {
  return ut_scene_add_piece(scene, positions.data(), positions.size() / 3, 0, sizes.data(),
                            sizes.size(), indices.data(), indices.size(), nullptr);
}

UtStatus create_world(const UtScene* scene, UtWorld** world) {
  return ut_world_create(scene, nullptr, world);
}

std::size_t piece_count(const UtScene* scene) {
  std::size_t count = 99;
  EXPECT_EQ(ut_scene_piece_count(scene, &count), UT_OK);
  return count;
}

}  // namespace

TEST(CapiBadInput, NullHandlesAreInvalidArguments) {
  EXPECT_EQ(ut_world_step(nullptr, 1), UT_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(last_error(), HasSubstr("world is NULL"));
  EXPECT_EQ(ut_world_detect(nullptr), UT_ERROR_INVALID_ARGUMENT);
  std::size_t count = 0;
  EXPECT_EQ(ut_world_vertex_count(nullptr, UT_ALL_PIECES, &count), UT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ut_scene_piece_count(nullptr, &count), UT_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(last_error(), HasSubstr("scene is NULL"));
  EXPECT_EQ(ut_world_create(nullptr, nullptr, nullptr), UT_ERROR_INVALID_ARGUMENT);
  UtWorld* world = reinterpret_cast<UtWorld*>(0x1);  // must be reset to NULL on failure
  EXPECT_EQ(ut_world_create(nullptr, nullptr, &world), UT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(world, nullptr);
  EXPECT_EQ(ut_world_create_scene(nullptr, nullptr, &world), UT_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(last_error(), HasSubstr("scene_name is NULL"));
  EXPECT_EQ(ut_settings_init(nullptr, sizeof(UtSettings)), UT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ut_untangle(nullptr, nullptr, nullptr, nullptr, nullptr, 0, nullptr, nullptr, nullptr),
            UT_ERROR_INVALID_ARGUMENT);
  ut_world_destroy(nullptr);
  ut_scene_destroy(nullptr);
}

TEST(CapiBadInput, NullArraysAreInvalidArgumentsAndLeaveTheSceneUnchanged) {
  ScenePtr scene = make_scene({});
  const Sheet sheet = horizontal_sheet();
  EXPECT_EQ(ut_scene_add_piece(scene.get(), nullptr, sheet.vertex_count(), 0,
                               sheet.face_sizes.data(), sheet.face_count(),
                               sheet.face_indices.data(), sheet.face_indices.size(), nullptr),
            UT_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(last_error(), HasSubstr("positions is NULL"));
  EXPECT_EQ(ut_scene_add_piece(scene.get(), sheet.positions.data(), sheet.vertex_count(), 0,
                               nullptr, sheet.face_count(), sheet.face_indices.data(),
                               sheet.face_indices.size(), nullptr),
            UT_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(last_error(), HasSubstr("face_sizes is NULL"));
  EXPECT_EQ(ut_scene_add_piece(scene.get(), sheet.positions.data(), sheet.vertex_count(), 0,
                               sheet.face_sizes.data(), sheet.face_count(), nullptr,
                               sheet.face_indices.size(), nullptr),
            UT_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(last_error(), HasSubstr("face_indices is NULL"));
  EXPECT_EQ(piece_count(scene.get()), 0u);

  WorldPtr world = make_world({sheet});
  EXPECT_EQ(ut_world_get_positions(world.get(), UT_ALL_PIECES, nullptr, sheet.vertex_count(), 0),
            UT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ut_world_set_positions(world.get(), UT_ALL_PIECES, nullptr, sheet.vertex_count(), 0),
            UT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(positions_of(world.get()), sheet.positions);
}

TEST(CapiBadInput, FaceSizesThatDoNotAddUpToTheIndicesAreRefused) {
  ScenePtr scene = make_scene({});
  EXPECT_EQ(add_triangles(scene.get(), {0, 0, 0, 1, 0, 0, 0, 1, 0}, {3}, {0, 1}),
            UT_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(last_error(), HasSubstr("add up to 3 corners, but 2 face indices"));
  EXPECT_EQ(piece_count(scene.get()), 0u);
}

TEST(CapiBadInput, ZeroVerticesOrFacesAreInvalidMeshes) {
  {
    ScenePtr scene = make_scene({});
    ASSERT_EQ(ut_scene_add_piece(scene.get(), nullptr, 0, 0, nullptr, 0, nullptr, 0, nullptr),
              UT_OK);
    UtWorld* world = nullptr;
    EXPECT_EQ(create_world(scene.get(), &world), UT_ERROR_INVALID_MESH);
    EXPECT_THAT(last_error(), HasSubstr("no vertices"));
    EXPECT_EQ(world, nullptr);
  }
  {
    ScenePtr scene = make_scene({});
    ASSERT_EQ(add_triangles(scene.get(), {0, 0, 0, 1, 0, 0, 0, 1, 0}, {}, {}), UT_OK);
    EXPECT_EQ(ut_scene_validate(scene.get()), UT_ERROR_INVALID_MESH);
    EXPECT_THAT(last_error(), HasSubstr("no faces"));
  }
  {
    ScenePtr scene = make_scene({});  // no piece at all
    UtWorld* world = nullptr;
    EXPECT_EQ(create_world(scene.get(), &world), UT_ERROR_INVALID_MESH);
    EXPECT_EQ(world, nullptr);
  }
}

TEST(CapiBadInput, IndexOutOfRangeNamesTheFaceAndTheVertex) {
  const Sheet good = horizontal_sheet();  // 121 vertices
  Sheet bad = good;
  bad.face_indices[4 * 17 + 2] = 2048;
  ScenePtr scene = make_scene({good});
  ASSERT_EQ(add(scene.get(), bad), UT_OK);  // checked when the mesh is built
  UtWorld* world = nullptr;
  EXPECT_EQ(create_world(scene.get(), &world), UT_ERROR_INVALID_MESH);
  const std::string message = last_error();
  EXPECT_THAT(message, HasSubstr("piece 1"));
  EXPECT_THAT(message, HasSubstr("face 17"));
  EXPECT_THAT(message, HasSubstr("2048"));
  EXPECT_THAT(message, HasSubstr("121"));
  EXPECT_EQ(world, nullptr);
}

TEST(CapiBadInput, FacesWithFewerThanThreeOrRepeatedCornersAreInvalidMeshes) {
  const std::vector<float> quad = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0};
  {
    ScenePtr scene = make_scene({});
    ASSERT_EQ(add_triangles(scene.get(), quad, {3, 2}, {0, 1, 2, 2, 3}), UT_OK);
    EXPECT_EQ(ut_scene_validate(scene.get()), UT_ERROR_INVALID_MESH);
    EXPECT_THAT(last_error(), HasSubstr("face 1 has 2 corners"));
  }
  {
    ScenePtr scene = make_scene({});
    ASSERT_EQ(add_triangles(scene.get(), quad, {4}, {0, 1, 1, 3}), UT_OK);
    UtWorld* world = nullptr;
    EXPECT_EQ(create_world(scene.get(), &world), UT_ERROR_INVALID_MESH);
    EXPECT_THAT(last_error(), HasSubstr("face 0 uses vertex 1 more than once"));
  }
}

TEST(CapiBadInput, NonFinitePositionsAreInvalidMeshes) {
  for (float bad :
       {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    Sheet sheet = horizontal_sheet();
    sheet.positions[3 * 42 + 1] = bad;
    ScenePtr scene = make_scene({sheet});
    UtWorld* world = nullptr;
    EXPECT_EQ(create_world(scene.get(), &world), UT_ERROR_INVALID_MESH);
    EXPECT_THAT(last_error(), HasSubstr("vertex 42"));
    EXPECT_THAT(last_error(), HasSubstr("non-finite"));
    UtFrameStats stats;
    stats.struct_size = sizeof stats;
    EXPECT_EQ(ut_detect(scene.get(), nullptr, &stats, nullptr, 0), UT_ERROR_INVALID_MESH);
  }
}

// Zero-area triangles are accepted, counted, and kept out of detection: a sliver lying across
// a sheet, which would cut it if it had area, gives no pair.
TEST(CapiBadInput, ZeroAreaTrianglesAreAcceptedCountedAndNotDetected) {
  ScenePtr scene = make_scene({horizontal_sheet()});
  // Three collinear points on a vertical line through the sheet.
  ASSERT_EQ(
      add_triangles(scene.get(), {0.05f, 0.07f, -0.5f, 0.05f, 0.07f, 0.0f, 0.05f, 0.07f, 0.5f}, {3},
                    {0, 1, 2}),
      UT_OK);
  UtFrameStats stats;
  stats.struct_size = sizeof stats;
  ASSERT_EQ(ut_detect(scene.get(), nullptr, &stats, nullptr, 0), UT_OK) << last_error();
  EXPECT_EQ(stats.degenerate_triangles, 1u);
  EXPECT_EQ(stats.pairs, 0u);
  UtWorld* world = nullptr;
  ASSERT_EQ(create_world(scene.get(), &world), UT_OK) << last_error();
  WorldPtr owner(world);
  ASSERT_EQ(ut_world_step(world, 2), UT_OK) << last_error();
  EXPECT_EQ(stats_of(world).degenerate_triangles, 1u);
}

// Non-manifold edges (three faces on one edge) are accepted and reported.
TEST(CapiBadInput, NonManifoldEdgesAreAcceptedAndReported) {
  // Three quads sharing the edge (0, 1) on the z axis, like the pages of a book.
  const std::vector<float> positions = {0,    0, 0,     0,     0,     1,     1,     0,
                                        0,    1, 0,     1,     -0.5f, 0.8f,  0,     -0.5f,
                                        0.8f, 1, -0.5f, -0.8f, 0,     -0.5f, -0.8f, 1};
  ScenePtr scene = make_scene({});
  ASSERT_EQ(add_triangles(scene.get(), positions, {4, 4, 4}, {0, 2, 3, 1, 0, 4, 5, 1, 0, 6, 7, 1}),
            UT_OK);
  UtWorld* world = nullptr;
  ASSERT_EQ(create_world(scene.get(), &world), UT_OK) << last_error();
  WorldPtr owner(world);
  ASSERT_EQ(ut_world_detect(world), UT_OK);
  EXPECT_EQ(stats_of(world).non_manifold_edges, 1u);
  ASSERT_EQ(ut_world_step(world, 2), UT_OK) << last_error();
}

TEST(CapiBadInput, PositionsOfTheWrongLengthAreRefusedAndChangeNothing) {
  const Sheet a = horizontal_sheet(), b = vertical_sheet();
  WorldPtr world = make_world({a, b});
  const std::vector<float> before = positions_of(world.get());
  std::vector<float> too_short(3 * (a.vertex_count() - 1), 1.0f);
  EXPECT_EQ(ut_world_set_positions(world.get(), 0, too_short.data(), a.vertex_count() - 1, 0),
            UT_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(last_error(), HasSubstr("120 vertices, but piece 0 has 121"));
  std::vector<float> all(before.size() + 3, 1.0f);
  EXPECT_EQ(ut_world_set_positions(world.get(), UT_ALL_PIECES, all.data(), all.size() / 3, 0),
            UT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ut_world_get_positions(world.get(), UT_ALL_PIECES, all.data(), all.size() / 3, 0),
            UT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ut_world_set_positions(world.get(), 2, all.data(), a.vertex_count(), 0),
            UT_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(last_error(), HasSubstr("piece 2 does not exist"));
  // A NaN anywhere refuses the whole array.
  std::vector<float> with_nan(a.positions);
  with_nan[3 * 7] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(ut_world_set_positions(world.get(), 0, with_nan.data(), a.vertex_count(), 0),
            UT_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(last_error(), HasSubstr("vertex 7 is not finite"));
  EXPECT_EQ(ut_world_set_positions(world.get(), 0, a.positions.data(), a.vertex_count(), 8),
            UT_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(last_error(), HasSubstr("stride"));
  EXPECT_EQ(positions_of(world.get()), before);
}

// An older caller's smaller UtSettings is accepted, the fields it does not know take their
// defaults; a larger one (from a newer header) is refused.
TEST(CapiBadInput, SmallerSettingsAreAcceptedLargerRefused) {
  UtSettings defaults = default_settings();
  UtSettings older = defaults;
  older.struct_size = offsetof(UtSettings, thickness);  // knows up to response_strength
  older.response_strength = 3.0;
  older.thickness = -5.0;  // outside its size: must not be read
  UtWorld* raw = nullptr;
  ScenePtr scene = make_scene({horizontal_sheet()});
  ASSERT_EQ(ut_world_create(scene.get(), &older, &raw), UT_OK) << last_error();
  WorldPtr world(raw);
  UtSettings read;
  read.struct_size = sizeof read;
  ASSERT_EQ(ut_world_get_settings(world.get(), &read), UT_OK);
  EXPECT_EQ(read.response_strength, 3.0);
  EXPECT_EQ(read.thickness, defaults.thickness);

  // Reading into an older struct writes only its fields.
  UtSettings partial;
  std::memset(&partial, 0xAB, sizeof partial);
  partial.struct_size = offsetof(UtSettings, thickness);
  ASSERT_EQ(ut_world_get_settings(world.get(), &partial), UT_OK);
  EXPECT_EQ(partial.response_strength, 3.0);
  unsigned char untouched[sizeof(double)];
  std::memset(untouched, 0xAB, sizeof untouched);
  EXPECT_EQ(std::memcmp(&partial.thickness, untouched, sizeof untouched), 0);

  UtSettings newer = defaults;
  newer.struct_size = sizeof(UtSettings) + 8;
  EXPECT_EQ(ut_world_set_settings(world.get(), &newer), UT_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(last_error(), HasSubstr("struct_size"));
  EXPECT_EQ(ut_settings_init(&newer, sizeof(UtSettings) + 8), UT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ut_settings_init(&newer, 2), UT_ERROR_INVALID_ARGUMENT);
}

TEST(CapiBadInput, AbsurdSettingsAreRefusedAndLeaveTheWorldsSettings) {
  WorldPtr world = make_world({horizontal_sheet()});
  UtSettings before;
  before.struct_size = sizeof before;
  ASSERT_EQ(ut_world_get_settings(world.get(), &before), UT_OK);
  const struct {
    const char* field;
    void (*spoil)(UtSettings&);
  } cases[] = {
      {"thickness", [](UtSettings& s) { s.thickness = -2; }},
      {"thickness", [](UtSettings& s) { s.thickness = 1e9; }},
      {"thickness", [](UtSettings& s) { s.thickness = std::nan(""); }},
      {"response_strength", [](UtSettings& s) { s.response_strength = -1; }},
      {"response_strength", [](UtSettings& s) { s.response_strength = 1e12; }},
      {"iterations", [](UtSettings& s) { s.iterations = -3; }},
      {"iterations", [](UtSettings& s) { s.iterations = 2000000000; }},
      {"method", [](UtSettings& s) { s.method = 9; }},
      {"untangle", [](UtSettings& s) { s.untangle = 2; }},
      {"threads", [](UtSettings& s) { s.threads = -1; }},
      {"time_step", [](UtSettings& s) { s.time_step = 0; }},
  };
  for (const auto& c : cases) {
    UtSettings spoiled = default_settings();
    c.spoil(spoiled);
    EXPECT_EQ(ut_world_set_settings(world.get(), &spoiled), UT_ERROR_INVALID_ARGUMENT) << c.field;
    EXPECT_THAT(last_error(), HasSubstr(c.field));
    UtWorld* other = nullptr;
    ScenePtr scene = make_scene({horizontal_sheet()});
    EXPECT_EQ(ut_world_create(scene.get(), &spoiled, &other), UT_ERROR_INVALID_ARGUMENT) << c.field;
    EXPECT_EQ(other, nullptr);
  }
  UtSettings after;
  after.struct_size = sizeof after;
  ASSERT_EQ(ut_world_get_settings(world.get(), &after), UT_OK);
  EXPECT_EQ(std::memcmp(&before, &after, sizeof before), 0);
}

TEST(CapiBadInput, GrabMoveWithoutGrabBeginIsAnInvalidOperation) {
  WorldPtr world = make_world({horizontal_sheet()});
  const std::vector<float> before = positions_of(world.get());
  const float target[3] = {0, 0, 1}, normal[3] = {0, 0, 1};
  EXPECT_EQ(ut_world_grab_move(world.get(), target, normal), UT_ERROR_INVALID_OPERATION);
  EXPECT_THAT(last_error(), HasSubstr("grab_begin"));
  const float origin[3] = {0, 0, 1}, zero[3] = {0, 0, 0};
  std::uint32_t particle = 0;
  EXPECT_EQ(ut_world_grab_begin(world.get(), origin, zero, 0.1f, &particle),
            UT_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(last_error(), HasSubstr("direction is the zero vector"));
  EXPECT_EQ(ut_world_grab_begin(world.get(), origin, normal, -1.0f, &particle),
            UT_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(last_error(), HasSubstr("pick_radius"));
  EXPECT_EQ(positions_of(world.get()), before);
}

TEST(CapiBadInput, SteppingAfterAFailedCreateIsAnInvalidArgument) {
  Sheet bad = horizontal_sheet();
  bad.face_indices[0] = 5000;
  ScenePtr scene = make_scene({bad});
  UtWorld* world = nullptr;
  ASSERT_EQ(create_world(scene.get(), &world), UT_ERROR_INVALID_MESH);
  ASSERT_EQ(world, nullptr);
  EXPECT_EQ(ut_world_step(world, 10), UT_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(last_error(), HasSubstr("world is NULL"));
}

TEST(CapiBadInput, UnknownSceneNamesAreListed) {
  UtWorld* world = nullptr;
  EXPECT_EQ(ut_world_create_scene("tangled", nullptr, &world), UT_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(last_error(), HasSubstr("tangled"));
  EXPECT_EQ(world, nullptr);
}

TEST(CapiBadInput, QueryThenFillRefusesTooSmallArrays) {
  WorldPtr world = make_world({horizontal_sheet(), vertical_sheet()});
  ASSERT_EQ(ut_world_detect(world.get()), UT_OK);
  std::size_t count = 0;
  std::uint32_t one_face = 0;
  EXPECT_EQ(ut_world_intersecting_faces(world.get(), 0, &one_face, 1, &count),
            UT_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(last_error(), HasSubstr("faces holds 1 entries, but 6 are needed"));
  float point[3];
  std::size_t points = 0, contours = 0;
  EXPECT_EQ(ut_world_contours(world.get(), point, 1, &points, nullptr, nullptr, 0, &contours),
            UT_ERROR_INVALID_ARGUMENT);
}

TEST(CapiBadInput, NegativeInverseMassIsRefused) {
  const Sheet sheet = horizontal_sheet();
  std::vector<float> masses(sheet.vertex_count(), 1.0f);
  masses[9] = -1.0f;
  ScenePtr scene = make_scene({});
  EXPECT_EQ(add(scene.get(), sheet, masses.data()), UT_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(last_error(), HasSubstr("inverse mass of vertex 9"));
  EXPECT_EQ(piece_count(scene.get()), 0u);
}

// Version, status names, method and scene names, settings defaults and the thread count through
// the C ABI.
#include <thread>
#include <utility>

#include "fixtures.hpp"

using namespace fixtures;

// Property: the library's packed version is the header's.
TEST(CapiBasics, VersionMatchesTheHeader) {
  const uint32_t version = ut_abi_version();
  EXPECT_EQ(version >> 16, uint32_t{UT_ABI_VERSION_MAJOR});
  EXPECT_EQ((version >> 8) & 0xFF, uint32_t{UT_ABI_VERSION_MINOR});
  EXPECT_EQ(version & 0xFF, uint32_t{UT_ABI_VERSION_PATCH});
}

TEST(CapiBasics, StatusNames) {
  EXPECT_STREQ(ut_status_name(UT_OK), "UT_OK");
  EXPECT_STREQ(ut_status_name(UT_ERROR_INVALID_MESH), "UT_ERROR_INVALID_MESH");
  EXPECT_STREQ(ut_status_name(UT_ERROR_CANCELLED), "UT_ERROR_CANCELLED");
  EXPECT_STREQ(ut_status_name(42), "UT_UNKNOWN");
}

// Property: the defaults are the SPEC's (ICM, strength 1, 10 iterations, 60 fps, g = 9.81 down).
TEST(CapiBasics, SettingsDefaults) {
  const UtSettings s = default_settings();
  EXPECT_EQ(s.struct_size, sizeof(UtSettings));
  EXPECT_EQ(s.method, UT_METHOD_ICM);
  EXPECT_EQ(s.untangle, 1);
  EXPECT_EQ(s.proximity, 1);
  EXPECT_EQ(s.cull, 1);
  EXPECT_EQ(s.iterations, 10);
  EXPECT_EQ(s.threads, 0);
  EXPECT_EQ(s.response_strength, 1.0);
  EXPECT_DOUBLE_EQ(s.time_step, 1.0 / 60.0);
  EXPECT_EQ(s.gravity[0], 0.0);
  EXPECT_EQ(s.gravity[1], 0.0);
  EXPECT_DOUBLE_EQ(s.gravity[2], -9.81);
}

// Property: an older caller's init writes only its own bytes.
TEST(CapiBasics, SettingsInitOfAnOlderSizeWritesOnlyThatPrefix) {
  UtSettings s;
  std::memset(&s, 0xCD, sizeof s);
  ASSERT_EQ(ut_settings_init(&s, offsetof(UtSettings, response_strength)), UT_OK);
  EXPECT_EQ(s.struct_size, offsetof(UtSettings, response_strength));
  EXPECT_EQ(s.iterations, 10);
  unsigned char untouched[sizeof(double)];
  std::memset(untouched, 0xCD, sizeof untouched);
  EXPECT_EQ(std::memcmp(&s.response_strength, untouched, sizeof untouched), 0);
}

// Property: each built-in scene has its own settings (the SPEC's layer gaps).
TEST(CapiBasics, SceneSettings) {
  UtSettings s;
  s.struct_size = sizeof s;
  ASSERT_EQ(ut_scene_settings("dropped-cloth", &s), UT_OK) << last_error();
  EXPECT_DOUBLE_EQ(s.thickness, 0.02);
  EXPECT_EQ(ut_scene_settings("no-such-scene", &s), UT_ERROR_INVALID_ARGUMENT);
}

// Property: the name lists are the header's: methods by UtMethod value, each scene name one
// that ut_scene_settings knows, and an index past the end (or a NULL out-pointer) is refused.
TEST(CapiBasics, MethodAndSceneNames) {
  const char* name = nullptr;
  const std::pair<int32_t, const char*> methods[] = {{UT_METHOD_ICM, "icm"},
                                                     {UT_METHOD_KIKUCHI, "kikuchi"},
                                                     {UT_METHOD_YE, "ye"},
                                                     {UT_METHOD_BUFFET, "buffet"}};
  for (const auto& [value, expected] : methods) {
    ASSERT_EQ(ut_method_name(value, &name), UT_OK);
    EXPECT_STREQ(name, expected);
  }
  EXPECT_EQ(ut_method_name(4, &name), UT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ut_method_name(-1, &name), UT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ut_method_name(0, nullptr), UT_ERROR_INVALID_ARGUMENT);
  int32_t scenes = 0;
  while (ut_scene_name(scenes, &name) == UT_OK) {
    UtSettings settings = default_settings();
    EXPECT_EQ(ut_scene_settings(name, &settings), UT_OK) << name;
    ++scenes;
  }
  EXPECT_EQ(scenes, 3);
  ASSERT_EQ(ut_scene_name(0, &name), UT_OK);
  EXPECT_STREQ(name, "tangled-start");
}

TEST(CapiBasics, ThreadCount) {
  ASSERT_EQ(ut_set_threads(1), UT_OK);
  int32_t threads = 0;
  ASSERT_EQ(ut_get_threads(&threads), UT_OK);
  EXPECT_EQ(threads, 1);
  ASSERT_EQ(ut_set_threads(2), UT_OK);
  ASSERT_EQ(ut_get_threads(&threads), UT_OK);
  EXPECT_EQ(threads, 2);
  EXPECT_EQ(ut_set_threads(-1), UT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ut_set_threads(0), UT_OK);
}

// Property: the message is per thread: a failure on another thread does not overwrite ours.
TEST(CapiBasics, LastErrorIsThreadLocal) {
  ASSERT_EQ(ut_world_step(nullptr, 1), UT_ERROR_INVALID_ARGUMENT);
  const std::string mine = last_error();
  std::string theirs;
  std::thread other([&] {
    ut_scene_add_sphere(nullptr, nullptr, 1.0f);
    theirs = last_error();
  });
  other.join();
  EXPECT_EQ(last_error(), mine);
  EXPECT_NE(theirs, mine);
}

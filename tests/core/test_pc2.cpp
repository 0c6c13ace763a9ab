// Tests of io/pc2: PC2 reading and writing, checked against hand-built byte layouts, and every
// malformed file refused with its reason.
#include "untangle/io/pc2.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "support/temp_dir.hpp"

namespace untangle {
namespace {

using test::read_bytes;
using test::TempDir;
using test::write_bytes;

// Little-endian encodings written independently of io/pc2.cpp (through memcpy on this x86 host,
// checked to be little-endian first).
std::string le_i32(std::int32_t v) {
  std::string s(4, '\0');
  for (int k = 0; k < 4; ++k) s[k] = static_cast<char>((static_cast<std::uint32_t>(v) >> (8 * k)));
  return s;
}
std::string le_f32(float v) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &v, 4);
  return le_i32(static_cast<std::int32_t>(bits));
}
std::string pc2_header(std::int32_t version, std::int32_t vertices, float start, float sampling,
                       std::int32_t frames) {
  return std::string("POINTCACHE2\0", 12) + le_i32(version) + le_i32(vertices) + le_f32(start) +
         le_f32(sampling) + le_i32(frames);
}

// Property: the file has exactly the documented layout: the 32-byte header (signature, version 1,
// counts, start and sampling as little-endian int32/float32) then float32 xyz per vertex per
// frame, compared with bytes built here by hand.
TEST(Pc2, WrittenBytesMatchTheFormat) {
  TempDir dir;
  PointCache cache;
  cache.vertex_count = 2;
  cache.start_frame = 3;
  cache.sampling = 0.5f;
  cache.frames = {{Vec3(1, 2, 3), Vec3(-4, 5.5, 6)}, {Vec3(0.25, 0, -1), Vec3(7, 8, 9)}};
  write_pc2(dir / "a.pc2", cache);
  std::string expected = pc2_header(1, 2, 3.0f, 0.5f, 2);
  for (const float x : {1.f, 2.f, 3.f, -4.f, 5.5f, 6.f, 0.25f, 0.f, -1.f, 7.f, 8.f, 9.f}) {
    expected += le_f32(x);
  }
  EXPECT_EQ(read_bytes(dir / "a.pc2"), expected);
}

// Property: a cache written and read back has the same header and the positions rounded to
// float32, for a random cache of several frames.
TEST(Pc2, RoundTripKeepsFloatValues) {
  TempDir dir;
  std::mt19937 random(3);
  std::uniform_real_distribution<double> value(-10, 10);
  PointCache cache;
  cache.vertex_count = 37;
  cache.start_frame = -2;
  cache.sampling = 1;
  for (int f = 0; f < 5; ++f) {
    Positions frame;
    for (std::size_t v = 0; v < cache.vertex_count; ++v) {
      frame.emplace_back(value(random), value(random), value(random));
    }
    cache.frames.push_back(frame);
  }
  write_pc2(dir / "r.pc2", cache);
  EXPECT_EQ(std::filesystem::file_size(dir / "r.pc2"), 32u + 5u * 37u * 12u);
  const PointCache back = read_pc2(dir / "r.pc2");
  EXPECT_EQ(back.vertex_count, 37u);
  EXPECT_EQ(back.start_frame, -2.0f);
  EXPECT_EQ(back.sampling, 1.0f);
  ASSERT_EQ(back.frames.size(), 5u);
  for (std::size_t f = 0; f < 5; ++f) {
    for (std::size_t v = 0; v < 37; ++v) {
      for (int k = 0; k < 3; ++k) {
        EXPECT_EQ(back.frames[f][v][k],
                  static_cast<double>(static_cast<float>(cache.frames[f][v][k])));
      }
    }
  }
}

// Property: the streaming writer patches the frame count, and refuses a frame of the wrong size
// or a value that float32 cannot hold.
TEST(Pc2, StreamingWriterPatchesTheFrameCount) {
  TempDir dir;
  {
    Pc2Writer writer(dir / "s.pc2", 3);
    for (int f = 0; f < 4; ++f) writer.append(Positions(3, Vec3(f, f, f)));
    EXPECT_THROW(writer.append(Positions(2, Vec3::Zero())), IoError);
    EXPECT_THROW(writer.append(Positions(3, Vec3(1e300, 0, 0))), IoError);
    EXPECT_EQ(writer.frame_count(), 4u);
  }  // the destructor finishes
  const PointCache back = read_pc2(dir / "s.pc2");
  ASSERT_EQ(back.frames.size(), 4u);
  EXPECT_EQ(back.frames[3][2], Vec3(3, 3, 3));
  EXPECT_THROW(Pc2Writer(dir / "z.pc2", 0), IoError);
}

// A header-only file (no frame) may announce any vertex count; reading it allocates nothing
// for the frames it does not hold (2^31 - 1 vertices would be a 25 GB frame buffer).
TEST(Pc2, AHeaderWithoutFramesAllocatesNoFrame) {
  TempDir dir;
  write_bytes(dir / "empty.pc2", pc2_header(1, 2147483647, 0, 1, 0));
  const PointCache cache = read_pc2(dir / "empty.pc2");
  EXPECT_EQ(cache.vertex_count, 2147483647u);
  EXPECT_TRUE(cache.frames.empty());
}

std::string pc2_error(const std::filesystem::path& path, const std::string& bytes) {
  write_bytes(path, bytes);
  try {
    read_pc2(path);
  } catch (const IoError& error) {
    return error.what();
  }
  return "";
}

// Property: every inconsistent file is refused with its reason, never read past its end.
TEST(Pc2, MalformedFilesAreRefused) {
  TempDir dir;
  const auto path = dir / "bad.pc2";
  const std::string frame = le_f32(1) + le_f32(2) + le_f32(3);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"POINTCACHE2", "shorter than the 32-byte PC2 header"},
      {std::string("POINTCACHE3\0", 12) + pc2_header(1, 1, 0, 1, 0).substr(12), "not a PC2 file"},
      {pc2_header(2, 1, 0, 1, 1) + frame, "PC2 version 2"},
      {pc2_header(1, 0, 0, 1, 0), "vertex count 0 must be positive"},
      {pc2_header(1, -5, 0, 1, 0), "vertex count -5 must be positive"},
      {pc2_header(1, 1, 0, 1, -1), "negative frame count -1"},
      {pc2_header(1, 1, 0, 0, 1) + frame, "sampling"},
      {pc2_header(1, 1, std::numeric_limits<float>::infinity(), 1, 1) + frame, "start frame"},
      {pc2_header(1, 1, 0, 1, 3) + frame + frame, "truncated: the header says 3 frames"},
      {pc2_header(1, 1, 0, 1, 1) + frame.substr(0, 7), "truncated"},
      {pc2_header(1, 2147483647, 0, 1, 2147483647) + frame, "truncated"},
      {pc2_header(1, 1, 0, 1, 1) + frame + "xx", "2 bytes after the 1 frames"},
      {pc2_header(1, 1, 0, 1, 1) + le_f32(1) + le_f32(std::nanf("")) + le_f32(3),
       "frame 0, vertex 0 has a non-finite coordinate"},
  };
  for (const auto& [bytes, expected] : cases) {
    const std::string message = pc2_error(path, bytes);
    EXPECT_NE(message.find(expected), std::string::npos)
        << "message: " << message << "\nexpected: " << expected;
  }
  EXPECT_THROW(read_pc2(dir / "missing.pc2"), IoError);
}

}  // namespace
}  // namespace untangle

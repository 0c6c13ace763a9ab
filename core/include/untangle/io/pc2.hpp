// PC2: Blender's Mesh Cache point cache ("POINTCACHE2"), one float32 xyz position per vertex
// per frame, always little-endian. Reading never trusts the file.
#pragma once

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <vector>

#include "untangle/io/io_error.hpp"
#include "untangle/mesh.hpp"

namespace untangle {

// A PC2 point cache. start_frame and sampling (frames between samples) are the header's floats.
struct PointCache {
  std::size_t vertex_count = 0;
  float start_frame = 0;
  float sampling = 1;
  std::vector<Positions> frames;
};

// Throws IoError for a wrong signature or version, a negative count, a size that does not
// match the header (truncated or with trailing bytes) and non-finite header or coordinates.
PointCache read_pc2(const std::filesystem::path& path);
// Throws IoError when a frame does not have vertex_count positions or a value does not fit.
void write_pc2(const std::filesystem::path& path, const PointCache& cache);

// Writes a PC2 file frame by frame, so a long run need not keep every frame in memory. The
// header's frame count is patched by finish() (also from the destructor, which cannot report).
class Pc2Writer {
 public:
  Pc2Writer(const std::filesystem::path& path, std::size_t vertex_count, float start_frame = 0,
            float sampling = 1);
  ~Pc2Writer();
  Pc2Writer(const Pc2Writer&) = delete;
  Pc2Writer& operator=(const Pc2Writer&) = delete;

  void append(const Positions& frame);
  void finish();
  std::size_t frame_count() const { return frame_count_; }

 private:
  std::filesystem::path path_;
  std::ofstream out_;
  std::size_t vertex_count_;
  std::size_t frame_count_ = 0;
  bool finished_ = false;
};

}  // namespace untangle

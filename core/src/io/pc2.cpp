#include "untangle/io/pc2.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <system_error>

#include "errno_message.hpp"

namespace untangle {
namespace {

// PC2 encoding (always little-endian, whatever the host)

constexpr std::size_t kPc2HeaderBytes = 32;
constexpr std::array<char, 12> kPc2Signature = {'P', 'O', 'I', 'N', 'T', 'C',
                                                'A', 'C', 'H', 'E', '2', '\0'};

void put_u32(char* out, std::uint32_t value) {
  for (int k = 0; k < 4; ++k) out[k] = static_cast<char>((value >> (8 * k)) & 0xffu);
}

std::uint32_t get_u32(const char* in) {
  std::uint32_t value = 0;
  for (int k = 0; k < 4; ++k) {
    value |= std::uint32_t{static_cast<unsigned char>(in[k])} << (8 * k);
  }
  return value;
}

void put_f32(char* out, float value) {
  put_u32(out, std::bit_cast<std::uint32_t>(value));
}
float get_f32(const char* in) {
  return std::bit_cast<float>(get_u32(in));
}
std::int32_t get_i32(const char* in) {
  return std::bit_cast<std::int32_t>(get_u32(in));
}

std::array<char, kPc2HeaderBytes> pc2_header(std::size_t vertex_count, float start_frame,
                                             float sampling, std::size_t frame_count) {
  std::array<char, kPc2HeaderBytes> header{};
  std::copy(kPc2Signature.begin(), kPc2Signature.end(), header.begin());
  put_u32(header.data() + 12, 1);
  put_u32(header.data() + 16, static_cast<std::uint32_t>(vertex_count));
  put_f32(header.data() + 20, start_frame);
  put_f32(header.data() + 24, sampling);
  put_u32(header.data() + 28, static_cast<std::uint32_t>(frame_count));
  return header;
}

constexpr auto kInt32Max = static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max());

}  // namespace

PointCache read_pc2(const std::filesystem::path& path) {
  const std::string name = path.string();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError("cannot open '" + name + "' for reading: " + errno_message());
  std::error_code error;
  const std::uintmax_t file_bytes = std::filesystem::file_size(path, error);
  if (error) throw IoError("cannot read the size of '" + name + "': " + error.message());
  if (file_bytes < kPc2HeaderBytes) {
    throw IoError(name + ": " + std::to_string(file_bytes) +
                  " bytes is shorter than the 32-byte PC2 header");
  }
  std::array<char, kPc2HeaderBytes> header{};
  if (!in.read(header.data(), header.size())) throw IoError(name + ": cannot read the header");
  if (!std::equal(kPc2Signature.begin(), kPc2Signature.end(), header.begin())) {
    throw IoError(name + ": not a PC2 file (the header does not start with \"POINTCACHE2\")");
  }
  const std::int32_t version = get_i32(header.data() + 12);
  const std::int32_t vertices = get_i32(header.data() + 16);
  const float start_frame = get_f32(header.data() + 20);
  const float sampling = get_f32(header.data() + 24);
  const std::int32_t frames = get_i32(header.data() + 28);
  if (version != 1) {
    throw IoError(name + ": PC2 version " + std::to_string(version) + ", only version 1 is known");
  }
  if (vertices <= 0) {
    throw IoError(name + ": vertex count " + std::to_string(vertices) + " must be positive");
  }
  if (frames < 0) throw IoError(name + ": negative frame count " + std::to_string(frames));
  if (!std::isfinite(start_frame)) throw IoError(name + ": the start frame is not finite");
  if (!std::isfinite(sampling) || sampling <= 0) {
    throw IoError(name + ": the sampling " + std::to_string(sampling) + " must be positive");
  }

  const auto vertex_count = static_cast<std::size_t>(vertices);
  const auto frame_count = static_cast<std::size_t>(frames);
  const std::uintmax_t frame_bytes = std::uintmax_t{12} * vertex_count;
  // frame_bytes * frame_count can exceed 64 bits for an absurd header, so the size is compared
  // through a division that cannot wrap around.
  const std::uintmax_t data_bytes = file_bytes - kPc2HeaderBytes;
  const std::uintmax_t whole_frames = data_bytes / frame_bytes;
  if (whole_frames < frame_count) {
    throw IoError(name + ": truncated: the header says " + std::to_string(frame_count) +
                  " frames of " + std::to_string(vertex_count) + " vertices, the file holds " +
                  std::to_string(data_bytes) + " bytes of frame data (" +
                  std::to_string(whole_frames) + " whole frames)");
  }
  if (whole_frames > frame_count || data_bytes % frame_bytes != 0) {
    throw IoError(name + ": " + std::to_string(data_bytes - frame_bytes * frame_count) +
                  " bytes after the " + std::to_string(frame_count) +
                  " frames the header announces");
  }

  PointCache cache;
  cache.vertex_count = vertex_count;
  cache.start_frame = start_frame;
  cache.sampling = sampling;
  cache.frames.resize(frame_count);
  // Only a file that holds a frame (checked above) sizes the buffer: a header-only file may
  // announce any vertex count.
  std::vector<char> buffer(frame_count > 0 ? static_cast<std::size_t>(frame_bytes) : 0);
  for (std::size_t f = 0; f < frame_count; ++f) {
    if (!in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()))) {
      throw IoError(name + ": read error in frame " + std::to_string(f));
    }
    Positions& frame = cache.frames[f];
    frame.resize(vertex_count);
    for (std::size_t v = 0; v < vertex_count; ++v) {
      for (int k = 0; k < 3; ++k) {
        const float x = get_f32(buffer.data() + 12 * v + 4 * static_cast<std::size_t>(k));
        if (!std::isfinite(x)) {
          throw IoError(name + ": frame " + std::to_string(f) + ", vertex " + std::to_string(v) +
                        " has a non-finite coordinate");
        }
        frame[v][k] = x;
      }
    }
  }
  return cache;
}

void write_pc2(const std::filesystem::path& path, const PointCache& cache) {
  Pc2Writer writer(path, cache.vertex_count, cache.start_frame, cache.sampling);
  for (const Positions& frame : cache.frames) writer.append(frame);
  writer.finish();
}

Pc2Writer::Pc2Writer(const std::filesystem::path& path, std::size_t vertex_count, float start_frame,
                     float sampling)
    : path_(path), vertex_count_(vertex_count) {
  if (vertex_count == 0 || vertex_count > kInt32Max) {
    throw IoError(path.string() + ": a PC2 file holds 1 to 2^31-1 vertices, not " +
                  std::to_string(vertex_count));
  }
  if (!std::isfinite(start_frame) || !std::isfinite(sampling) || sampling <= 0) {
    throw IoError(path.string() + ": the start frame must be finite and the sampling positive");
  }
  out_.open(path, std::ios::binary | std::ios::trunc);
  if (!out_) throw IoError("cannot open '" + path.string() + "' for writing: " + errno_message());
  const auto header = pc2_header(vertex_count, start_frame, sampling, 0);
  out_.write(header.data(), header.size());
  if (!out_) throw IoError("cannot write '" + path.string() + "': " + errno_message());
}

Pc2Writer::~Pc2Writer() {
  try {
    finish();
  } catch (...) {
    // A destructor cannot report; callers that need to know call finish() themselves.
  }
}

void Pc2Writer::append(const Positions& frame) {
  if (finished_) throw std::logic_error("Pc2Writer::append after finish");
  if (frame.size() != vertex_count_) {
    throw IoError(path_.string() + ": frame " + std::to_string(frame_count_) + " has " +
                  std::to_string(frame.size()) + " positions, the cache has " +
                  std::to_string(vertex_count_) + " vertices");
  }
  if (frame_count_ == kInt32Max) throw IoError(path_.string() + ": too many frames for PC2");
  std::vector<char> buffer(12 * vertex_count_);
  for (std::size_t v = 0; v < vertex_count_; ++v) {
    for (int k = 0; k < 3; ++k) {
      const auto x = static_cast<float>(frame[v][k]);
      if (!std::isfinite(x)) {
        throw IoError(path_.string() + ": frame " + std::to_string(frame_count_) + ", vertex " +
                      std::to_string(v) + " has a coordinate that is not a finite float");
      }
      put_f32(buffer.data() + 12 * v + 4 * static_cast<std::size_t>(k), x);
    }
  }
  out_.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
  if (!out_) throw IoError("cannot write '" + path_.string() + "': " + errno_message());
  ++frame_count_;
}

void Pc2Writer::finish() {
  if (finished_) return;
  finished_ = true;
  std::array<char, 4> count{};
  put_u32(count.data(), static_cast<std::uint32_t>(frame_count_));
  out_.seekp(28);
  out_.write(count.data(), count.size());
  out_.close();
  if (!out_) throw IoError("cannot write '" + path_.string() + "': " + errno_message());
}

}  // namespace untangle

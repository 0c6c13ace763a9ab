// The engine as the CLI sees it: the C ABI of libuntangle (untangle.h) behind small RAII
// handles that turn a failed status into a CliError carrying ut_last_error(). The CLI reaches
// the engine only through this ABI (DESIGN.md); core's io is used for files alone.
#pragma once

#include <untangle.h>

#include <string>
#include <string_view>
#include <vector>

#include "args.hpp"
#include "progress.hpp"
#include "untangle/io/obj.hpp"

namespace untangle::cli {

// Throws CliError("<what>: <ut_last_error()>") unless status is UT_OK.
void check(UtStatus status, std::string_view what);

// The library's own lists (ut_method_name, ut_scene_name): methods in UtMethod order. The CLI
// writes no method or scene name out; its help and messages list these.
const std::vector<std::string>& method_names();
const std::vector<std::string>& scene_names();

// "a, b or c" (last_separator " or "), as help texts and messages list names.
std::string joined(const std::vector<std::string>& names, std::string_view last_separator = " or ");
// The --method help: method_names() with the default settings' method marked "(default)".
std::string method_choices();

// Throws UsageError naming the accepted values.
UtMethod parse_method(std::string_view name);
std::string_view method_name(int32_t method);
void check_scene_name(std::string_view name);

UtSettings default_settings();
UtSettings scene_settings(const std::string& scene_name);
UtUntangleOptions default_untangle_options();

// Applies --threads to both the calling thread's default and the settings.
void apply_threads(UtSettings& settings, int threads);

std::vector<float> to_floats(const Positions& positions);
Positions from_floats(const std::vector<float>& values);

class SceneHandle {
 public:
  SceneHandle();
  ~SceneHandle() { ut_scene_destroy(scene_); }
  SceneHandle(const SceneHandle&) = delete;
  SceneHandle& operator=(const SceneHandle&) = delete;

  void add_piece(const PolygonMesh& piece);
  const UtScene* get() const { return scene_; }

 private:
  UtScene* scene_ = nullptr;
};

// An OBJ file and its pieces; every error names the file.
struct MeshFile {
  ObjMesh obj;
  ObjPieces pieces;
};
MeshFile read_mesh_file(const std::string& path);

// Adds the pieces of an OBJ file (their positions as the input state); errors name the file
// and the piece.
void add_pieces(SceneHandle& scene, const ObjPieces& pieces, const std::string& path = "");

class WorldHandle {
 public:
  // seed != 0: the start jittered by 1e-6 of the spacing (ut_world_create_scene_seeded).
  explicit WorldHandle(const std::string& scene_name, const UtSettings* settings = nullptr,
                       std::uint64_t seed = 0);
  // Errors of the creation are prefixed with `what`.
  WorldHandle(const SceneHandle& scene, const UtSettings* settings = nullptr,
              std::string_view what = "world");
  ~WorldHandle() { ut_world_destroy(world_); }
  WorldHandle(const WorldHandle&) = delete;
  WorldHandle& operator=(const WorldHandle&) = delete;

  UtWorld* get() const { return world_; }
  std::size_t piece_count() const;
  std::size_t vertex_count(int32_t piece = UT_ALL_PIECES) const;
  UtFrameStats stats() const;
  void step(uint32_t frames = 1);
  std::vector<float> positions() const;  // all pieces, packed xyz
  // The pieces with their current positions, for writing them as OBJ.
  std::vector<PolygonMesh> pieces() const;

 private:
  UtWorld* world_ = nullptr;
};

UtFrameStats empty_stats();

// A UtProgressFn that redraws a status line ("iteration 12/300 [####....] 5 pairs") and
// cancels the engine's work after Ctrl-C (see install_interrupt_handler).
struct ProgressReporter {
  std::string label;  // "iteration", "frame"
  StatusLine line;
  static int32_t callback(void* self, int32_t done, int32_t total, uint64_t pairs);
};

}  // namespace untangle::cli

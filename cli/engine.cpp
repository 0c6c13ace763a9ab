#include "engine.hpp"

#include <algorithm>
#include <limits>
#include <sstream>

namespace untangle::cli {
namespace {

std::vector<std::string> names_from(UtStatus (*name_at)(int32_t, const char**)) {
  std::vector<std::string> names;
  const char* name = nullptr;
  for (int32_t i = 0; name_at(i, &name) == UT_OK; ++i) names.emplace_back(name);
  return names;
}

}  // namespace

void check(UtStatus status, std::string_view what) {
  if (status == UT_OK) return;
  std::string message = ut_last_error();
  if (message.empty()) message = ut_status_name(status);
  throw CliError(std::string(what) + ": " + message);
}

const std::vector<std::string>& method_names() {
  static const std::vector<std::string> kNames = names_from(ut_method_name);
  return kNames;
}

const std::vector<std::string>& scene_names() {
  static const std::vector<std::string> kNames = names_from(ut_scene_name);
  return kNames;
}

std::string joined(const std::vector<std::string>& names, std::string_view last_separator) {
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) text += i + 1 == names.size() ? last_separator : ", ";
    text += names[i];
  }
  return text;
}

std::string method_choices() {
  std::vector<std::string> names = method_names();
  const int32_t method = default_settings().method;
  if (method >= 0 && static_cast<std::size_t>(method) < names.size()) names[method] += " (default)";
  return joined(names);
}

UtMethod parse_method(std::string_view name) {
  const std::vector<std::string>& names = method_names();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<UtMethod>(i);
  }
  throw UsageError("unknown method '" + std::string(name) + "' (use " + joined(names) + ")");
}

std::string_view method_name(int32_t method) {
  const std::vector<std::string>& names = method_names();
  if (method >= 0 && static_cast<std::size_t>(method) < names.size()) return names[method];
  return "unknown";
}

void check_scene_name(std::string_view name) {
  for (const std::string& known : scene_names()) {
    if (known == name) return;
  }
  throw UsageError("unknown scene '" + std::string(name) + "' (use " + joined(scene_names()) + ")");
}

UtSettings default_settings() {
  UtSettings settings{};
  check(ut_settings_init(&settings, sizeof settings), "settings");
  return settings;
}

UtSettings scene_settings(const std::string& scene_name) {
  check_scene_name(scene_name);
  UtSettings settings{};
  settings.struct_size = sizeof settings;
  check(ut_scene_settings(scene_name.c_str(), &settings), "scene " + scene_name);
  return settings;
}

UtUntangleOptions default_untangle_options() {
  UtUntangleOptions options{};
  check(ut_untangle_options_init(&options, sizeof options), "untangle options");
  return options;
}

void apply_threads(UtSettings& settings, int threads) {
  check(ut_set_threads(threads), "--threads");
  settings.threads = threads;
}

std::vector<float> to_floats(const Positions& positions) {
  std::vector<float> values;
  values.reserve(3 * positions.size());
  for (const Vec3& p : positions) {
    for (int k = 0; k < 3; ++k) values.push_back(static_cast<float>(p[k]));
  }
  return values;
}

Positions from_floats(const std::vector<float>& values) {
  Positions positions(values.size() / 3);
  for (std::size_t i = 0; i < positions.size(); ++i) {
    positions[i] = Vec3(values[3 * i], values[3 * i + 1], values[3 * i + 2]);
  }
  return positions;
}

SceneHandle::SceneHandle() {
  check(ut_scene_create(&scene_), "scene");
}

void SceneHandle::add_piece(const PolygonMesh& piece) {
  const std::vector<float> positions = to_floats(piece.positions);
  check(ut_scene_add_piece(scene_, positions.data(), piece.positions.size(), 0,
                           piece.face_sizes.data(), piece.face_sizes.size(),
                           piece.face_indices.data(), piece.face_indices.size(), nullptr),
        "mesh");
}

MeshFile read_mesh_file(const std::string& path) {
  MeshFile file{read_obj(path), {}};
  try {
    file.pieces = split_pieces(file.obj);
  } catch (const IoError& error) {
    throw CliError(path + ": " + error.what());
  }
  return file;
}

void add_pieces(SceneHandle& scene, const ObjPieces& pieces, const std::string& path) {
  const std::string prefix = path.empty() ? std::string() : path + ": ";
  // The file is read in doubles, the library works in floats: a finite coordinate beyond the
  // float range would reach it as Inf and be called "non-finite".
  std::size_t global = 0;
  for (const PolygonMesh& piece : pieces.meshes) {
    for (const Vec3& p : piece.positions) {
      if (p.cwiseAbs().maxCoeff() > std::numeric_limits<float>::max()) {
        std::ostringstream message;
        message << prefix << "vertex " << pieces.source_vertex[global] + 1 << " (" << p.x() << ", "
                << p.y() << ", " << p.z() << ") is beyond the range of a float (about 3.4e38)";
        throw CliError(message.str());
      }
      ++global;
    }
  }
  for (std::size_t p = 0; p < pieces.meshes.size(); ++p) {
    try {
      scene.add_piece(pieces.meshes[p]);
    } catch (const CliError& error) {
      throw CliError(prefix + "piece '" + pieces.names[p] + "': " + error.what());
    }
  }
  // The mesh checks (index ranges, repeated corners, ...) run when a world is built; running
  // them now names the file in the message.
  check(ut_scene_validate(scene.get()), prefix + "invalid mesh");
}

WorldHandle::WorldHandle(const std::string& scene_name, const UtSettings* settings,
                         std::uint64_t seed) {
  check_scene_name(scene_name);
  check(ut_world_create_scene_seeded(scene_name.c_str(), settings, seed, &world_),
        "scene " + scene_name);
}

WorldHandle::WorldHandle(const SceneHandle& scene, const UtSettings* settings,
                         std::string_view what) {
  check(ut_world_create(scene.get(), settings, &world_), what);
}

std::size_t WorldHandle::piece_count() const {
  std::size_t count = 0;
  check(ut_world_piece_count(world_, &count), "world");
  return count;
}

std::size_t WorldHandle::vertex_count(int32_t piece) const {
  std::size_t count = 0;
  check(ut_world_vertex_count(world_, piece, &count), "world");
  return count;
}

UtFrameStats empty_stats() {
  UtFrameStats stats{};
  stats.struct_size = sizeof stats;
  return stats;
}

UtFrameStats WorldHandle::stats() const {
  UtFrameStats stats = empty_stats();
  check(ut_world_stats(world_, &stats), "stats");
  return stats;
}

void WorldHandle::step(uint32_t frames) {
  check(ut_world_step(world_, frames), "step");
}

std::vector<float> WorldHandle::positions() const {
  const std::size_t n = vertex_count();
  std::vector<float> values(3 * n);
  check(ut_world_get_positions(world_, UT_ALL_PIECES, values.data(), n, 0), "positions");
  return values;
}

std::vector<PolygonMesh> WorldHandle::pieces() const {
  std::vector<PolygonMesh> pieces(piece_count());
  for (std::size_t p = 0; p < pieces.size(); ++p) {
    const auto piece = static_cast<int32_t>(p);
    std::size_t face_count = 0;
    std::size_t index_count = 0;
    check(ut_world_piece_faces(world_, piece, nullptr, 0, &face_count, nullptr, 0, &index_count),
          "faces");
    PolygonMesh& mesh = pieces[p];
    mesh.face_sizes.resize(face_count);
    mesh.face_indices.resize(index_count);
    check(ut_world_piece_faces(world_, piece, mesh.face_sizes.data(), face_count, &face_count,
                               mesh.face_indices.data(), index_count, &index_count),
          "faces");
    const std::size_t n = vertex_count(piece);
    std::vector<float> values(3 * n);
    check(ut_world_get_positions(world_, piece, values.data(), n, 0), "positions");
    mesh.positions = from_floats(values);
  }
  return pieces;
}

int32_t ProgressReporter::callback(void* self, int32_t done, int32_t total, uint64_t pairs) {
  auto& reporter = *static_cast<ProgressReporter*>(self);
  const auto count = static_cast<std::size_t>(std::max(done, 0));
  const auto of = static_cast<std::size_t>(std::max(total, 0));
  reporter.line.show(reporter.label + " " + std::to_string(count) + "/" + std::to_string(of) + " " +
                     progress_bar(count, of) + " " + std::to_string(pairs) + " pairs");
  return interrupted() ? 0 : 1;
}

}  // namespace untangle::cli

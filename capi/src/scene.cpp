// Settings defaults, the thread count, and UtScene: the pieces and colliders a world, the
// untangler or detect-only are built from.
#include <cmath>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "guard.hpp"
#include "handles.hpp"
#include "untangle/scenes.hpp"
#include "untangle/thread_scope.hpp"

using untangle::capi::guard;
using untangle::capi::require;

namespace {

const UtScene& scene_ref(const UtScene* scene) {
  return *require(scene, "scene");
}

// Core's names as NUL-terminated strings that live as long as the library.
std::vector<std::string> c_strings(std::span<const std::string_view> names) {
  return {names.begin(), names.end()};
}

const char* name_at(const std::vector<std::string>& names, std::int32_t index, const char* what) {
  if (index < 0 || static_cast<std::size_t>(index) >= names.size()) {
    throw std::invalid_argument(std::string("there is no ") + what + " " + std::to_string(index) +
                                " (there are " + std::to_string(names.size()) + ")");
  }
  return names[static_cast<std::size_t>(index)].c_str();
}

std::size_t piece_vertex_count(const UtScene& scene, std::int32_t piece) {
  if (piece == UT_ALL_PIECES) {
    std::size_t total = 0;
    for (const untangle::PolygonMesh& mesh : scene.pieces) total += mesh.positions.size();
    return total;
  }
  if (piece < 0 || static_cast<std::size_t>(piece) >= scene.pieces.size()) {
    throw std::invalid_argument("piece " + std::to_string(piece) +
                                " does not exist (the scene has " +
                                std::to_string(scene.pieces.size()) + " pieces)");
  }
  return scene.pieces[static_cast<std::size_t>(piece)].positions.size();
}

}  // namespace

extern "C" {

UT_API UtStatus ut_settings_init(UtSettings* settings, size_t struct_size) {
  return guard([&] {
    require(settings, "settings");
    if (struct_size > UINT32_MAX) struct_size = UINT32_MAX;  // refused below with its size
    untangle::capi::check_struct_size(static_cast<std::uint32_t>(struct_size), sizeof(UtSettings),
                                      "UtSettings");
    settings->struct_size = static_cast<std::uint32_t>(struct_size);
    untangle::capi::settings_to_c(untangle::Settings{}, settings);
  });
}

UT_API UtStatus ut_scene_settings(const char* scene_name, UtSettings* settings) {
  return guard([&] {
    require(scene_name, "scene_name");
    require(settings, "settings");
    untangle::capi::check_struct_size(settings->struct_size, sizeof(UtSettings), "UtSettings");
    untangle::capi::settings_to_c(untangle::make_scene(scene_name).settings, settings);
  });
}

UT_API UtStatus ut_method_name(int32_t index, const char** name) {
  return guard([&] {
    static const std::vector<std::string> kNames = c_strings(untangle::method_names());
    *require(name, "name") = name_at(kNames, index, "method");
  });
}

UT_API UtStatus ut_scene_name(int32_t index, const char** name) {
  return guard([&] {
    static const std::vector<std::string> kNames = c_strings(untangle::scene_names());
    *require(name, "name") = name_at(kNames, index, "scene");
  });
}

UT_API UtStatus ut_set_threads(int32_t threads) {
  return guard([&] {
    if (threads < 0 || threads > 1024) {
      throw std::invalid_argument("threads must be in [0, 1024] (0 = OpenMP's default), got " +
                                  std::to_string(threads));
    }
    untangle::set_default_threads(threads);
  });
}

UT_API UtStatus ut_get_threads(int32_t* threads) {
  return guard([&] { *require(threads, "threads") = untangle::default_threads(); });
}

UT_API UtStatus ut_scene_create(UtScene** out_scene) {
  return guard([&] {
    require(out_scene, "out_scene");
    *out_scene = nullptr;
    *out_scene = new UtScene();
  });
}

UT_API void ut_scene_destroy(UtScene* scene) {
  delete scene;
}

UT_API UtStatus ut_scene_add_piece(UtScene* scene, const float* positions, size_t vertex_count,
                                   size_t stride, const uint32_t* face_sizes, size_t face_count,
                                   const uint32_t* face_indices, size_t index_count,
                                   const float* inverse_mass) {
  return guard([&] {
    require(scene, "scene");
    if (vertex_count > 0) require(positions, "positions");
    if (face_count > 0) require(face_sizes, "face_sizes");
    if (index_count > 0) require(face_indices, "face_indices");
    const std::size_t piece = scene->pieces.size();
    const std::string at = "piece " + std::to_string(piece) + ": ";

    untangle::PolygonMesh mesh;
    // NaN/Inf positions are reported by ClothMesh::build, which names the piece and vertex.
    mesh.positions = untangle::capi::read_xyz(positions, vertex_count, stride,
                                              (at + "positions").c_str(), false);
    std::uint64_t corners = 0;
    for (std::size_t f = 0; f < face_count; ++f) corners += face_sizes[f];
    if (corners != index_count) {
      throw std::invalid_argument(at + "the face sizes add up to " + std::to_string(corners) +
                                  " corners, but " + std::to_string(index_count) +
                                  " face indices were given");
    }
    mesh.face_sizes.assign(face_sizes, face_sizes + face_count);
    mesh.face_indices.assign(face_indices, face_indices + index_count);

    std::vector<double> masses;
    if (inverse_mass != nullptr) {
      masses.resize(vertex_count);
      for (std::size_t v = 0; v < vertex_count; ++v) {
        if (!(inverse_mass[v] >= 0) || !std::isfinite(inverse_mass[v])) {
          std::ostringstream message;
          message << at << "inverse mass of vertex " << v << " must be finite and >= 0, got "
                  << inverse_mass[v];
          throw std::invalid_argument(message.str());
        }
        masses[v] = inverse_mass[v];
      }
    }
    scene->pieces.reserve(piece + 1);
    scene->inverse_mass.reserve(piece + 1);
    scene->pieces.push_back(std::move(mesh));  // cannot throw now: capacity is reserved
    scene->inverse_mass.push_back(std::move(masses));
  });
}

UT_API UtStatus ut_scene_add_sphere(UtScene* scene, const float center[3], float radius) {
  return guard([&] {
    require(scene, "scene");
    require(center, "center");
    const untangle::Vec3 c(center[0], center[1], center[2]);
    if (!c.allFinite()) throw std::invalid_argument("sphere center is not finite");
    if (!(radius > 0) || !std::isfinite(radius)) {
      throw std::invalid_argument("sphere radius must be finite and > 0, got " +
                                  std::to_string(radius));
    }
    scene->spheres.push_back({c, radius});
  });
}

UT_API UtStatus ut_scene_set_ground(UtScene* scene, float height) {
  return guard([&] {
    require(scene, "scene");
    if (!std::isfinite(height)) throw std::invalid_argument("ground height is not finite");
    scene->ground_height = height;
  });
}

UT_API UtStatus ut_scene_piece_count(const UtScene* scene, size_t* count) {
  return guard([&] {
    const UtScene& s = scene_ref(scene);
    *require(count, "count") = s.pieces.size();
  });
}

UT_API UtStatus ut_scene_vertex_count(const UtScene* scene, int32_t piece, size_t* count) {
  return guard([&] {
    const UtScene& s = scene_ref(scene);
    require(count, "count");
    *count = piece_vertex_count(s, piece);
  });
}

UT_API UtStatus ut_scene_validate(const UtScene* scene) {
  // The checks are the build's; the vertex rows it could add check nothing more.
  return guard([&] {
    untangle::ClothMesh::build(scene_ref(scene).pieces, untangle::MeshParts::kDetection);
  });
}

}  // extern "C"

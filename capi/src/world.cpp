// UtWorld: the frame pipeline (untangle::World) behind the ABI, with the input polygons kept
// for ut_world_piece_faces and the colliders kept for drawing.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>

#include "guard.hpp"
#include "handles.hpp"
#include "untangle/scenes.hpp"
#include "untangle/thread_scope.hpp"

using untangle::capi::guard;
using untangle::capi::require;

namespace {

using Clock = std::chrono::steady_clock;

untangle::World& world_of(UtWorld* world) {
  return *require(world, "world")->world;
}
const untangle::World& world_of(const UtWorld* world) {
  return *require(world, "world")->world;
}

struct VertexRange {
  std::size_t begin = 0, count = 0;
};

std::size_t checked_piece(const UtWorld& world, std::int32_t piece) {
  const std::size_t pieces = world.topology.size();
  if (piece < 0 || static_cast<std::size_t>(piece) >= pieces) {
    throw std::invalid_argument("piece " + std::to_string(piece) +
                                " does not exist (the world has " + std::to_string(pieces) +
                                (pieces == 1 ? " piece)" : " pieces)"));
  }
  return static_cast<std::size_t>(piece);
}

VertexRange vertex_range(const UtWorld& world, std::int32_t piece) {
  const untangle::ClothMesh& mesh = world.world->mesh();
  if (piece == UT_ALL_PIECES) return {0, mesh.vertex_count()};
  const std::size_t p = checked_piece(world, piece);
  return {mesh.piece_vertex_begin[p], mesh.piece_vertex_begin[p + 1] - mesh.piece_vertex_begin[p]};
}

void check_count(const UtWorld& world, std::int32_t piece, std::size_t given, const char* what) {
  const VertexRange range = vertex_range(world, piece);
  if (given != range.count) {
    const std::string whose =
        piece == UT_ALL_PIECES ? "the world has" : "piece " + std::to_string(piece) + " has";
    throw std::invalid_argument(std::string(what) + " array has " + std::to_string(given) +
                                " vertices, but " + whose + " " + std::to_string(range.count));
  }
}

// Positions and velocities cross the ABI the same way: a piece's slice of one per-vertex
// array is written out, or replaced in a copy of the whole array that the world then takes
// (and validates) in one call, so a refused call leaves the world as it was.
struct VertexField {
  const char* name;
  const untangle::Positions& (untangle::World::*get)() const;
  void (untangle::World::*set)(const untangle::Positions&);
};
constexpr VertexField kPositions{"positions", &untangle::World::positions,
                                 &untangle::World::set_positions};
constexpr VertexField kVelocities{"velocities", &untangle::World::velocities,
                                  &untangle::World::set_velocities};

void get_field(const UtWorld* world, const VertexField& field, std::int32_t piece, float* out,
               std::size_t vertex_count, std::size_t stride) {
  const untangle::World& w = world_of(world);
  check_count(*world, piece, vertex_count, field.name);
  const VertexRange range = vertex_range(*world, piece);
  untangle::capi::write_xyz((w.*field.get)().data() + range.begin, range.count, out, stride);
}

void set_field(UtWorld* world, const VertexField& field, std::int32_t piece, const float* in,
               std::size_t vertex_count, std::size_t stride) {
  untangle::World& w = world_of(world);
  check_count(*world, piece, vertex_count, field.name);
  const VertexRange range = vertex_range(*world, piece);
  const untangle::Positions given =
      untangle::capi::read_xyz(in, vertex_count, stride, field.name, true);
  if (range.count == (w.*field.get)().size()) {
    (w.*field.set)(given);  // the whole array: no second copy
    return;
  }
  untangle::Positions all = (w.*field.get)();
  std::copy(given.begin(), given.end(), all.begin() + static_cast<std::ptrdiff_t>(range.begin));
  (w.*field.set)(all);
}

void check_capacity(const void* array, std::size_t capacity, std::size_t needed, const char* what) {
  if (array != nullptr && capacity < needed) {
    throw std::invalid_argument(std::string(what) + " holds " + std::to_string(capacity) +
                                " entries, but " + std::to_string(needed) + " are needed");
  }
}

untangle::Vec3 finite_vec3(const float* xyz, const char* what) {
  require(xyz, what);
  const untangle::Vec3 v(xyz[0], xyz[1], xyz[2]);
  if (!v.allFinite()) throw std::invalid_argument(std::string(what) + " is not finite");
  return v;
}

untangle::Vec3 unit_vec3(const float* xyz, const char* what) {
  const untangle::Vec3 v = finite_vec3(xyz, what);
  if (!(v.norm() > 0)) throw std::invalid_argument(std::string(what) + " is the zero vector");
  return v;
}

UtStatus create(untangle::Scene scene, const UtSettings* settings, UtWorld** out_world) {
  return guard([&] {
    require(out_world, "out_world");
    *out_world = nullptr;
    if (settings != nullptr) scene.settings = untangle::capi::settings_from_c(settings);
    auto handle = std::make_unique<UtWorld>();
    handle->spheres = scene.spheres;
    handle->ground_height = scene.ground_height;
    const auto start = Clock::now();
    {
      std::size_t vertices = 0;
      for (const untangle::PolygonMesh& piece : scene.pieces) vertices += piece.positions.size();
      untangle::ThreadScope threads(scene.settings.threads, vertices);  // the BVH build is parallel
      handle->world = std::make_unique<untangle::World>(scene);
    }
    handle->build_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    handle->topology = std::move(scene.pieces);
    for (untangle::PolygonMesh& piece : handle->topology) {
      piece.positions.clear();
      piece.positions.shrink_to_fit();
    }
    *out_world = handle.release();
  });
}

}  // namespace

extern "C" {

UT_API UtStatus ut_world_create(const UtScene* scene, const UtSettings* settings,
                                UtWorld** out_world) {
  if (out_world != nullptr) *out_world = nullptr;
  untangle::Scene description;
  const UtStatus copied = guard([&] {
    const UtScene& source = *require(scene, "scene");
    description.name = "custom";
    description.pieces = source.pieces;
    description.inverse_mass = untangle::capi::concatenated_inverse_mass(source);
    description.spheres = source.spheres;
    description.ground_height = source.ground_height;
  });
  if (copied != UT_OK) return copied;
  return create(std::move(description), settings, out_world);
}

UT_API UtStatus ut_world_create_scene(const char* scene_name, const UtSettings* settings,
                                      UtWorld** out_world) {
  return ut_world_create_scene_seeded(scene_name, settings, 0, out_world);
}

UT_API UtStatus ut_world_create_scene_seeded(const char* scene_name, const UtSettings* settings,
                                             uint64_t seed, UtWorld** out_world) {
  if (out_world != nullptr) *out_world = nullptr;
  untangle::Scene description;
  const UtStatus made = guard([&] {
    description = untangle::make_scene(require(scene_name, "scene_name"));
    untangle::jitter_start(description, seed);
  });
  if (made != UT_OK) return made;
  return create(std::move(description), settings, out_world);
}

UT_API void ut_world_destroy(UtWorld* world) {
  delete world;
}

UT_API UtStatus ut_world_piece_count(const UtWorld* world, size_t* count) {
  return guard([&] {
    require(world, "world");
    *require(count, "count") = world->topology.size();
  });
}

UT_API UtStatus ut_world_vertex_count(const UtWorld* world, int32_t piece, size_t* count) {
  return guard([&] {
    require(world, "world");
    require(count, "count");
    *count = vertex_range(*world, piece).count;
  });
}

UT_API UtStatus ut_world_piece_faces(const UtWorld* world, int32_t piece, uint32_t* face_sizes,
                                     size_t face_capacity, size_t* face_count,
                                     uint32_t* face_indices, size_t index_capacity,
                                     size_t* index_count) {
  return guard([&] {
    require(world, "world");
    require(face_count, "face_count");
    require(index_count, "index_count");
    const untangle::PolygonMesh& mesh = world->topology[checked_piece(*world, piece)];
    check_capacity(face_sizes, face_capacity, mesh.face_sizes.size(), "face_sizes");
    check_capacity(face_indices, index_capacity, mesh.face_indices.size(), "face_indices");
    if (face_sizes != nullptr)
      std::copy(mesh.face_sizes.begin(), mesh.face_sizes.end(), face_sizes);
    if (face_indices != nullptr) {
      std::copy(mesh.face_indices.begin(), mesh.face_indices.end(), face_indices);
    }
    *face_count = mesh.face_sizes.size();
    *index_count = mesh.face_indices.size();
  });
}

UT_API UtStatus ut_world_colliders(const UtWorld* world, float* spheres, size_t sphere_capacity,
                                   size_t* sphere_count, int32_t* has_ground,
                                   float* ground_height) {
  return guard([&] {
    require(world, "world");
    check_capacity(spheres, sphere_capacity, world->spheres.size(), "spheres");
    if (spheres != nullptr) {
      for (std::size_t i = 0; i < world->spheres.size(); ++i) {
        const untangle::Sphere& sphere = world->spheres[i];
        for (int k = 0; k < 3; ++k) spheres[4 * i + k] = static_cast<float>(sphere.center[k]);
        spheres[4 * i + 3] = static_cast<float>(sphere.radius);
      }
    }
    if (sphere_count != nullptr) *sphere_count = world->spheres.size();
    if (has_ground != nullptr) *has_ground = world->ground_height.has_value() ? 1 : 0;
    if (ground_height != nullptr) {
      *ground_height = static_cast<float>(world->ground_height.value_or(0.0));
    }
  });
}

UT_API UtStatus ut_world_get_settings(const UtWorld* world, UtSettings* settings) {
  return guard([&] {
    const untangle::World& w = world_of(world);
    require(settings, "settings");
    untangle::capi::check_struct_size(settings->struct_size, sizeof(UtSettings), "UtSettings");
    untangle::capi::settings_to_c(w.settings(), settings);
  });
}

UT_API UtStatus ut_world_set_settings(UtWorld* world, const UtSettings* settings) {
  return guard([&] {
    untangle::World& w = world_of(world);
    w.set_settings(untangle::capi::settings_from_c(require(settings, "settings")));
  });
}

UT_API UtStatus ut_world_step(UtWorld* world, uint32_t frames) {
  return guard([&] {
    untangle::World& w = world_of(world);
    for (uint32_t frame = 0; frame < frames; ++frame) w.step();
  });
}

UT_API UtStatus ut_world_detect(UtWorld* world) {
  return guard([&] {
    untangle::World& w = world_of(world);
    w.detect();
  });
}

UT_API UtStatus ut_world_get_positions(const UtWorld* world, int32_t piece, float* positions,
                                       size_t vertex_count, size_t stride) {
  return guard([&] { get_field(world, kPositions, piece, positions, vertex_count, stride); });
}

UT_API UtStatus ut_world_set_positions(UtWorld* world, int32_t piece, const float* positions,
                                       size_t vertex_count, size_t stride) {
  return guard([&] { set_field(world, kPositions, piece, positions, vertex_count, stride); });
}

UT_API UtStatus ut_world_get_velocities(const UtWorld* world, int32_t piece, float* velocities,
                                        size_t vertex_count, size_t stride) {
  return guard([&] { get_field(world, kVelocities, piece, velocities, vertex_count, stride); });
}

UT_API UtStatus ut_world_set_velocities(UtWorld* world, int32_t piece, const float* velocities,
                                        size_t vertex_count, size_t stride) {
  return guard([&] { set_field(world, kVelocities, piece, velocities, vertex_count, stride); });
}

UT_API UtStatus ut_world_stats(const UtWorld* world, UtFrameStats* stats) {
  return guard([&] {
    const untangle::World& w = world_of(world);
    require(stats, "stats");
    untangle::capi::check_struct_size(stats->struct_size, sizeof(UtFrameStats), "UtFrameStats");
    untangle::capi::stats_to_c(w.mesh(), w.stats(), w.intersections().candidate_pairs,
                               world->build_ms, stats);
  });
}

UT_API UtStatus ut_world_contours(const UtWorld* world, float* points, size_t point_capacity,
                                  size_t* point_count, uint32_t* offsets, uint8_t* types,
                                  size_t contour_capacity, size_t* contour_count) {
  return guard([&] {
    const untangle::World& w = world_of(world);
    require(point_count, "point_count");
    require(contour_count, "contour_count");
    const std::vector<untangle::Contour>& contours = w.contours().contours;
    std::size_t total_points = 0;
    for (const untangle::Contour& contour : contours) total_points += contour.hits.size();
    check_capacity(points, point_capacity, total_points, "points");
    check_capacity(types, contour_capacity, contours.size(), "types");
    check_capacity(offsets, contour_capacity, contours.size(), "offsets (contour_capacity + 1)");
    if (total_points > UINT32_MAX) throw std::length_error("too many contour points");

    const std::vector<untangle::Hit>& hits = w.intersections().hits;
    if (points != nullptr) {
      std::vector<untangle::Vec3> polyline;
      polyline.reserve(total_points);
      for (const untangle::Contour& contour : contours) {
        for (untangle::Index h : contour.hits) polyline.push_back(hits.at(h).point);
      }
      untangle::capi::write_xyz(polyline.data(), polyline.size(), points, 0);
    }
    if (offsets != nullptr) {
      std::uint32_t offset = 0;
      for (std::size_t c = 0; c < contours.size(); ++c) {
        offsets[c] = offset;
        offset += static_cast<std::uint32_t>(contours[c].hits.size());
      }
      offsets[contours.size()] = offset;
    }
    if (types != nullptr) {
      for (std::size_t c = 0; c < contours.size(); ++c) {
        types[c] = static_cast<std::uint8_t>(contours[c].type);
      }
    }
    *point_count = total_points;
    *contour_count = contours.size();
  });
}

UT_API UtStatus ut_world_culled_boxes(const UtWorld* world, float* boxes, size_t box_capacity,
                                      size_t* box_count) {
  return guard([&] {
    const untangle::World& w = world_of(world);
    require(box_count, "box_count");
    const std::vector<untangle::Index>& culled = w.intersections().culled_nodes;
    check_capacity(boxes, box_capacity, culled.size(), "boxes");
    if (boxes != nullptr) {
      const untangle::Bvh& bvh = w.bvh();
      std::vector<untangle::Vec3> corners;
      corners.reserve(2 * culled.size());
      for (untangle::Index node : culled) {
        const untangle::Kdop18f& volume = bvh.volume(node);
        corners.emplace_back(volume.min[0], volume.min[1], volume.min[2]);
        corners.emplace_back(volume.max[0], volume.max[1], volume.max[2]);
      }
      untangle::capi::write_xyz(corners.data(), corners.size(), boxes, 0);
    }
    *box_count = culled.size();
  });
}

UT_API UtStatus ut_world_intersecting_faces(const UtWorld* world, int32_t piece, uint32_t* faces,
                                            size_t capacity, size_t* count) {
  return guard([&] {
    const untangle::World& w = world_of(world);
    require(count, "count");
    const std::size_t p = checked_piece(*world, piece);
    std::size_t first_polygon = 0;
    for (std::size_t q = 0; q < p; ++q) first_polygon += world->topology[q].face_sizes.size();
    const std::size_t end_polygon = first_polygon + world->topology[p].face_sizes.size();

    const untangle::ClothMesh& mesh = w.mesh();
    std::vector<std::uint32_t> local;
    for (const auto& pair : w.intersections().pairs) {
      for (untangle::Index t : pair) {
        const std::size_t polygon = mesh.triangle_polygon.at(t);
        if (polygon >= first_polygon && polygon < end_polygon) {
          local.push_back(static_cast<std::uint32_t>(polygon - first_polygon));
        }
      }
    }
    std::sort(local.begin(), local.end());
    local.erase(std::unique(local.begin(), local.end()), local.end());
    check_capacity(faces, capacity, local.size(), "faces");
    if (faces != nullptr) std::copy(local.begin(), local.end(), faces);
    *count = local.size();
  });
}

UT_API UtStatus ut_world_grab_begin(UtWorld* world, const float origin[3], const float direction[3],
                                    float pick_radius, uint32_t* particle) {
  return guard([&] {
    untangle::World& w = world_of(world);
    const untangle::Vec3 from = finite_vec3(origin, "origin");
    const untangle::Vec3 toward = unit_vec3(direction, "direction");
    require(particle, "particle");
    if (!(pick_radius > 0) || !std::isfinite(pick_radius)) {
      std::ostringstream message;
      message << "pick_radius must be finite and > 0, got " << pick_radius;
      throw std::invalid_argument(message.str());
    }
    w.grab_begin(from, toward.normalized(), pick_radius);
    *particle = w.grabbed_particle() == untangle::kNoIndex ? UT_NO_PARTICLE : w.grabbed_particle();
  });
}

UT_API UtStatus ut_world_grab_move(UtWorld* world, const float target[3],
                                   const float plane_normal[3]) {
  return guard([&] {
    untangle::World& w = world_of(world);
    const untangle::Vec3 to = finite_vec3(target, "target");
    const untangle::Vec3 normal = unit_vec3(plane_normal, "plane_normal");
    if (w.grabbed_particle() == untangle::kNoIndex) {
      throw untangle::capi::InvalidOperation(
          "grab_move without an active grab (call ut_world_grab_begin first)");
    }
    w.grab_move(to, normal.normalized());
  });
}

UT_API UtStatus ut_world_grab_end(UtWorld* world) {
  return guard([&] { world_of(world).grab_end(); });
}

}  // extern "C"

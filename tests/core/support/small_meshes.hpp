// Hand-built meshes for the narrow-phase tests: a piece from given triangles, and two
// one-triangle pieces run through the detector. Header-only.
#pragma once

#include <array>
#include <vector>

#include "crumpled_mesh.hpp"
#include "untangle/narrow_phase.hpp"

namespace untangle::test {

// A piece of the given triangles over the positions p.
inline PolygonMesh triangles(const Positions& p, const std::vector<std::array<Index, 3>>& faces) {
  PolygonMesh m;
  m.positions = p;
  for (const auto& f : faces) {
    m.face_sizes.push_back(3);
    m.face_indices.insert(m.face_indices.end(), f.begin(), f.end());
  }
  return m;
}

// Two pieces of one triangle each (corners 0-2 and 3-5), detected.
struct TwoTriangles {
  ClothMesh mesh;
  Positions x;
  Intersections found;

  explicit TwoTriangles(const std::vector<Vec3>& corners) {
    const std::vector<PolygonMesh> pieces = {
        triangles({corners[0], corners[1], corners[2]}, {{0, 1, 2}}),
        triangles({corners[3], corners[4], corners[5]}, {{0, 1, 2}})};
    mesh = ClothMesh::build(pieces);
    x = test::concatenated_positions(pieces);
    const Bvh bvh(mesh, x);
    found = find_intersections(mesh, bvh, x);
  }
};

}  // namespace untangle::test

// General position for the untangler: a hit exactly through a vertex or an edge of a triangle
// (kHitTolerance) is dropped by the narrow phase, so the contour through it breaks, or, where a
// whole crossing runs along mesh vertices (two grid-aligned sheets, an extruded profile that
// crosses itself), is not seen at all. The untangler may move the cloth, so instead of deciding
// such hits symbolically it moves the ends of their edges by a tiny, deterministic offset
// (Edelsbrunner & Muecke's simulation of simplicity, done on the numbers): the crossing is then
// transversal and found whole, and the offset is far below anything a user sees.
#pragma once

#include <span>
#include <vector>

#include "untangle/mesh.hpp"

namespace untangle {

// Moves both ends of each of `edges` (ClothMesh::edges indices) by `distance` along a direction
// hashed from the vertex and `round`: the result does not depend on the thread count, the CPU
// or the order of `edges`. Vertices with inverse mass 0 (pinned) stay. Returns how many
// vertices moved.
std::size_t nudge_edge_ends(const ClothMesh& mesh, std::span<const Index> edges,
                            const std::vector<double>& inverse_mass, double distance, int round,
                            Positions& x);

}  // namespace untangle

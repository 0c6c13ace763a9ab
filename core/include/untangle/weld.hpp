// Weld: seams of the input sewn, for the untangler. Meshes made by other tools often hold a
// vertex twice: panels of a garment sewn by coincident vertices, vertices split along UV or
// normal seams by an exporter. Left apart, the two sides of such a seam are separate surfaces
// that the proximity push opens by the cloth thickness; sewn, the seam moves as one. The input's
// vertex list is kept: results are written back to every copy, so copies that coincided in the
// input coincide in the output.
#pragma once

#include <span>
#include <vector>

#include "untangle/mesh.hpp"

namespace untangle {

struct Weld {
  // The pieces the untangler works on: the input pieces with each seam's copies as one vertex
  // (at the first copy's place), input pieces joined by a seam made one piece (in the order of
  // their first input piece, polygons in input order).
  std::vector<PolygonMesh> pieces;
  // Per input vertex (the pieces' global order), its vertex in `pieces` (their global order).
  std::vector<Index> welded_of;
  // Per welded vertex, its first input copy.
  std::vector<Index> first_copy;
  bool welds_nothing() const { return first_copy.size() == welded_of.size(); }
  // Input-sized positions (or any per-vertex values) to welded-sized ones, by the first copies.
  Positions to_welded(const Positions& input) const;
  // Per-vertex inverse masses: a welded vertex is as heavy as its heaviest copy (a pinned copy
  // pins it).
  std::vector<double> to_welded_inverse_mass(const std::vector<double>& input) const;
  // Welded-sized positions back to every input copy.
  Positions to_input(const Positions& welded) const;
};

// Sews the seams: copies (vertices whose positions are equal, ==, in the pieces and in every one
// of `agree`, further input-sized position sets such as a rest shape or the frames of a cache)
// that end border edges running together (two border edges between the same two places) become
// one vertex. Copies that meet only at a point or inside the cloth are where surfaces cross
// exactly through a vertex, and stay apart. Copies that are corners of one polygon stay apart
// (it would lose a corner). Input that the mesh build would refuse (indices out of range,
// non-finite positions, wrong sizes) is passed through unwelded, so the build reports it.
Weld sew_seams(std::span<const PolygonMesh> pieces, std::span<const Positions* const> agree = {});

// The pieces as they are, every vertex its own (nothing sewn).
Weld unsewn(std::span<const PolygonMesh> pieces);

}  // namespace untangle

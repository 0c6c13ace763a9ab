#include "thickness_hint.hpp"

#include <cstdio>

namespace untangle::cli {

std::string thickness_hint(const ObjPieces& pieces, const Positions& positions, double thickness) {
  if (positions.size() != pieces.vertex_count()) return "";
  double sum = 0;
  std::size_t edges = 0, offset = 0;
  for (const PolygonMesh& piece : pieces.meshes) {
    std::size_t first = 0;
    for (Index size : piece.face_sizes) {
      for (Index k = 0; k < size; ++k) {
        const Index a = piece.face_indices[first + k];
        const Index b = piece.face_indices[first + (k + 1) % size];
        if (a >= piece.positions.size() || b >= piece.positions.size())
          return "";  // the build says why
        sum += (positions[offset + a] - positions[offset + b]).norm();
        ++edges;
      }
      first += size;
    }
    offset += piece.positions.size();
  }
  if (edges == 0 || !(sum > 0) || !(thickness > 0)) return "";
  const double mean = sum / static_cast<double>(edges);
  const double ratio = thickness / mean;
  if (ratio >= 0.01) return "";  // above half an edge the untangler caps it itself
  char text[320];
  std::snprintf(text, sizeof text,
                "note: the thickness %g is %.2g times the mesh's mean edge length %.3g; if the "
                "mesh is not in metres, give --thickness in its units (1 for centimetres, 10 "
                "for millimetres)",
                thickness, ratio, mean);
  return text;
}

}  // namespace untangle::cli

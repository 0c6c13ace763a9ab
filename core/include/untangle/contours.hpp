// Contours: segments joined through their shared hits into closed loops and into open paths
// that end at the cloth border (SPEC "Contours"). Types after Ye 2017: loop (closed), boundary
// (an end on a border edge), crease (open with no border end, e.g. after a dropped hit).
#pragma once

#include "untangle/narrow_phase.hpp"

namespace untangle {

enum class ContourType { kLoop = 0, kBoundary = 1, kCrease = 2 };

struct Contour {
  std::vector<Index> segments;  // in walking order
  // Hits at the polyline's points in walking order: segments.size() + 1 of them for an open
  // path, segments.size() for a loop (the last segment returns to hits[0]).
  std::vector<Index> hits;
  // Per segment, its triangle on side 0 of the contour. The two sides are the two sheets that
  // cross; along one contour a side is one connected strip. For hit h of the contour,
  // hit_on_side0[k] says whether its edge lies on side 0 (else its triangle does).
  std::vector<Index> side0_triangles;
  std::vector<std::uint8_t> hit_edge_on_side0;
  bool closed = false;
  ContourType type = ContourType::kLoop;
  double length = 0;
  std::array<Index, 2> pieces{0, 0};  // piece of side 0 and of side 1 (equal: self-intersection)
};

struct Contours {
  std::vector<Contour> contours;               // deterministic order (by their smallest segment)
  std::array<std::size_t, 3> count_by_type{};  // indexed by ContourType
  std::vector<Index> segment_contour;          // contour of each segment of the Intersections
  double seconds = 0;
};

Contours trace_contours(const ClothMesh& mesh, const Positions& positions,
                        const Intersections& intersections);
// The same written over `out`, whose contours keep their lists' memory.
void trace_contours(const ClothMesh& mesh, const Positions& positions,
                    const Intersections& intersections, Contours& out);

}  // namespace untangle

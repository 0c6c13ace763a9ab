// A note for a mesh whose units do not look like the thickness's (a mesh in millimetres
// untangled with the default 0.01).
#pragma once

#include <string>

#include "untangle/io/obj.hpp"

namespace untangle::cli {

// The note for `thickness` against the mean polygon edge length of `pieces` placed at
// `positions` (the pieces' global vertex order), or "" when they fit: every measured case has a
// thickness of 0.056 to 0.68 mean edges, and this speaks below 0.01. (Above half an edge the
// untangler caps the thickness itself, kMaxThicknessPerSpacing.)
std::string thickness_hint(const ObjPieces& pieces, const Positions& positions, double thickness);

}  // namespace untangle::cli

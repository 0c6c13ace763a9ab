// A note for a mesh whose units do not look like the thickness's (a mesh in millimetres
// untangled with the default 0.01).
#pragma once

#include <string>

#include "untangle/io/obj.hpp"

namespace untangle::cli {

// The note for `thickness` against the mean polygon edge length of `pieces` placed at
// `positions` (the pieces' global vertex order), or "" when they fit: the untangler is measured
// with thicknesses from 0.056 to 0.68 of the mean edge (docs/measurements.md), and this speaks
// below 0.01 or above 2.
std::string thickness_hint(const ObjPieces& pieces, const Positions& positions, double thickness);

}  // namespace untangle::cli

// Point-triangle distance: the closest point of a triangle (closest_point_on_triangle, declared in
// untangle/proximity.hpp) and the swept test the proximity search makes of a point and a
// triangle.
#pragma once

#include <array>

#include "untangle/proximity.hpp"

namespace untangle::proximity_detail {

// A point that passes through the triangle's plane on the straight way from `from` to x, closer
// than the thickness to the triangle where it does (the plane's crossing taken where the signed
// distance, linear between the ends, is 0: exact for a triangle that does not turn).
bool passes_through(const Positions& from, const Positions& x, Index p,
                    const std::array<Index, 3>& tri, double thickness);

}  // namespace untangle::proximity_detail

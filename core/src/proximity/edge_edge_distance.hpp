// Edge-edge distance: the closest points of two segments (closest_points_of_segments, declared
// in untangle/proximity.hpp) and the tests the proximity search makes of two edges.
#pragma once

#include <array>

#include "untangle/proximity.hpp"

namespace untangle::proximity_detail {

// Two segments closer than the thickness at interior points (where a closest point is an end
// point, the point-triangle pairs hold the contact).
bool close_inside(const Vec3& a0, const Vec3& a1, const Vec3& b0, const Vec3& b1, double thickness);

// Two edges that pass through each other on the straight way from `from` to x, as
// passes_through for a point and a triangle.
bool edges_pass(const Positions& from, const Positions& x, const std::array<Index, 2>& ea,
                const std::array<Index, 2>& eb, double thickness);

}  // namespace untangle::proximity_detail

// Shared vocabulary of the engine: vectors, indices and position arrays.
// Everything inside core computes in double; the C ABI converts to float at its edge.
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <cstdint>
#include <limits>
#include <vector>

namespace untangle {

using Vec3 = Eigen::Vector3d;
using Index = std::uint32_t;
inline constexpr Index kNoIndex = std::numeric_limits<Index>::max();

// One position (or velocity, or displacement) per particle, in global vertex order.
using Positions = std::vector<Vec3>;

}  // namespace untangle

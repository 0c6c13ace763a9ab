// The straight way from `from` to x that a swept search covers (ProximitySearch::find with
// `from`): what the swept point-triangle and edge-edge tests share.
#pragma once

#include "untangle/types.hpp"

namespace untangle::proximity_detail {

// The point of the way from `from` to x at part t of it.
inline Vec3 along(const Positions& from, const Positions& x, Index v, double t) {
  return from[v] + t * (x[v] - from[v]);
}

// Where a signed distance that goes from d0 to d1 on the way passes 0; negative when it keeps
// its sign (touching 0 at an end counts as no crossing: the pair is close there and found so).
inline double crossing_part(double d0, double d1) {
  if (!((d0 > 0 && d1 < 0) || (d0 < 0 && d1 > 0))) return -1;
  return d0 / (d0 - d1);
}

}  // namespace untangle::proximity_detail

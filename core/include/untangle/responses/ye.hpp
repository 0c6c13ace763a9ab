// Ye et al. 2017 ("A Unified Cloth Untangling Framework Through Discrete Collision Detection"):
// the response depends on the contour's type. A boundary contour cuts off a region that is pulled
// back through the pierced triangles near one end of the contour; a crease gets the ICM gradient
// at full length h0; a loop is handled as ICM (Volino 2006).
#pragma once

#include "untangle/response.hpp"

namespace untangle {

class YeResponse final : public Response {
 public:
  static constexpr int kRings = 3;  // how far from the contour's end the region moves

  Displacement compute(const ResponseInput& input) override;

  // Boundary contours whose hit edges did not cut the mesh into separate regions (e.g. an end
  // lost to a dropped hit); they were answered as creases. Of the last compute.
  std::size_t uncut_boundaries() const { return uncut_boundaries_; }

 private:
  std::size_t uncut_boundaries_ = 0;
};

}  // namespace untangle

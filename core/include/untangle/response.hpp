// Response: the untangling stage of the frame pipeline. From the frame's intersections and
// contours it computes a displacement per particle, which the solver applies in small parts
// across its iterations. ICM, Kikuchi, Ye and Buffet each implement it in responses/.
#pragma once

#include <memory>
#include <string_view>

#include "untangle/contours.hpp"
#include "untangle/settings.hpp"

namespace untangle {

struct Displacement {
  Positions delta;  // per particle; empty = no displacement this frame
  // Particles where a proximity push that opposes delta is dropped, when
  // drop_opposing_proximity is set (SPEC "Proximity constraints"): next to a contour for ICM,
  // Ye and Buffet; for Kikuchi, those of pairs whose valid side is known from history.
  std::vector<std::uint8_t> near_contour;
  bool drop_opposing_proximity = true;
  bool carries_momentum = true;    // false: like the proximity push, not turned into velocity
  std::size_t stuck_contours = 0;  // contours that did not shrink over the last frames
  bool empty() const { return delta.empty(); }
};

struct ResponseInput {
  const ClothMesh& mesh;
  const Positions& positions;
  const std::vector<double>& inverse_mass;
  const Intersections& intersections;
  const Contours& contours;
  const Settings& settings;
  double spacing;  // resolved: settings.spacing or the mesh's mean rest edge length
  const Bvh& bvh;  // refit to positions this frame (inflated by the thickness)
  // The positions at the start of the frame, before the prediction (null when unknown): the
  // state before a crossing that happened within this frame.
  const Positions* start_positions = nullptr;
};

class Response {
 public:
  virtual ~Response() = default;
  virtual Displacement compute(const ResponseInput& input) = 0;
};

// The response of a method; it may keep state between frames (Kikuchi's remembered sides).
std::unique_ptr<Response> make_response(Method method);

}  // namespace untangle

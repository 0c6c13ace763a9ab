// Buffet et al. 2019 ("Implicit Untangling: A Robust Solution for Modeling Layered Clothing"):
// each sheet (piece) is a layer with an implicit field, the signed distance to the plane of its
// closest triangle offset by the thickness (eq. 13). A vertex on the wrong side of another layer
// is moved towards the mean surface of the two (eq. 5, 7) by damped Newton steps (section 6.3).
#pragma once

#include <vector>

#include "untangle/response.hpp"

namespace untangle {

struct LayerStats {
  bool single_sheet = false;  // one piece: nothing to order, so no response (not an error)
  std::size_t wrong_side_vertices = 0;  // vertices behind another layer's offset surface
  std::size_t capped_vertices = 0;      // of those, moved by the per-frame cap, not the step
};

class BuffetResponse final : public Response {
 public:
  static constexpr double kNewtonStep = 0.3;  // fraction of the Newton step (section 6.3)

  Displacement compute(const ResponseInput& input) override;

  // Pieces from the innermost layer to the outermost; empty = piece order (piece 0 innermost).
  // compute throws std::invalid_argument unless it is a permutation of the mesh's pieces.
  void set_layer_order(std::vector<Index> order) { layer_order_ = std::move(order); }
  const std::vector<Index>& layer_order() const { return layer_order_; }

  const LayerStats& stats() const { return stats_; }  // of the last compute

 private:
  std::vector<Index> layer_order_;
  LayerStats stats_;
};

}  // namespace untangle

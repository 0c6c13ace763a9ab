// Approach filter: the last part of a frame's velocity update (SPEC step 7), after the
// inelastic repulsion of Bridson, Fedkiw & Anderson 2002 ("Robust treatment of collisions,
// contact and friction for cloth animation", section 7.2). The next frame's prediction moves
// every particle by dt * v at once; a fold that closes faster than the thickness per frame would
// cross the other layer in that prediction, before any proximity pair could hold it. So the pairs
// that are close at the next prediction, or pass through each other on the way to it (a swept
// proximity search), keep the side they have now: on the prediction itself each is held at a
// tenth of the thickness (or its current gap, if smaller), and the velocities of the particles
// moved follow the held prediction. Momentum along the pair is lost, as in an inelastic contact.
#pragma once

#include "untangle/proximity.hpp"

namespace untangle {

struct ApproachFilterInput {
  const Positions& x;  // the frame's end positions
  const std::vector<double>& inverse_mass;
  double time_step = 0;
  double thickness = 0;
  Vec3 gravity_step = Vec3::Zero();  // dt^2 g: the next prediction adds it
  // Pairs one polygon ring apart too: a fold one polygon wide crosses between triangles that
  // share no vertex, and the narrow phase counts such crossings.
  bool ring_pairs = false;
};

// Changes v in place; returns the number of pairs that were held. Serial over the sorted pairs,
// so the result does not depend on the thread count.
std::size_t filter_approach(ProximitySearch& search, const ApproachFilterInput& input,
                            Positions& v);

}  // namespace untangle

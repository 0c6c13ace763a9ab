// Relaxation: lowering the stretch of a clean state the untangling reached, through clean states
// only (docs/untangler.md). Internal to core/src/untangler*.
#pragma once

#include "stages.hpp"

namespace untangle::detail {

// The clean state the untangling reached is stretched where the pushes went. Each relaxation
// frame runs the solver on it without the response and the pull (the pull leads back into the
// tangle), with proximity pairs that only hold the gap they have: a clean state's sides are
// consistent, and crushed layers pushed apart to the thickness would be stretched again. Where
// the frame still brings an intersection back, its move is halved until the state is clean
// again (checked by detection), so every state the relaxation goes through is clean; the one of
// least strain is kept in `clean`. Returns false when progress cancelled.
bool relax(Splits& splits, const Positions& reference, const FrameTerms& untangling,
           const UntangleOptions& options, const Progress& progress, Positions& clean,
           UntangleReport& report);

}  // namespace untangle::detail

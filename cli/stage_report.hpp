// The untangler's time by stage (UtUntangleReport's seconds_* fields), as `fix` and `bake` print
// it: a JSON object, or one line of milliseconds per iteration.
#pragma once

#include <untangle.h>
#include "json.hpp"

namespace untangle::cli {

// Writes "stage_seconds": {detection, analysis, response, solver, proximity, strain_limit}.
void write_stage_seconds(JsonWriter& out, const UtUntangleReport& report);

// "  ms per iteration: detection …, analysis …, response …, solver … (proximity …, strain
// limit …)", after `indent`; nothing when no iteration ran.
void print_stage_milliseconds(const UtUntangleReport& report, long long iterations,
                              const char* indent);

}  // namespace untangle::cli

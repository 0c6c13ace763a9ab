// Scenes: pure functions returning the description (world_def.hpp) of the three reference
// scenes of the SPEC (tangled start, dropped cloth, two sheets). Demo content above the world:
// nothing in the frame pipeline includes this header.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "untangle/world_def.hpp"

namespace untangle {

Scene tangled_start();
Scene dropped_cloth();
Scene two_sheets();

// The built-in scenes' names ("tangled-start", "dropped-cloth", "two-sheets"): the one list the
// C ABI, the CLI and the add-on read.
std::span<const std::string_view> scene_names();

// One of scene_names(); throws std::invalid_argument otherwise.
Scene make_scene(std::string_view name);

// Moves the scene's start (its initial positions, or the rest shape) by up to `fraction` of the
// particle spacing along each axis, uniformly at random from a generator seeded with `seed`:
// the same positions on every machine. Pinned particles stay. Seed 0 changes nothing. A result
// that changes with such a jitter hangs on float rounding (issue 19: rounding differs between
// CPUs).
void jitter_start(Scene& scene, std::uint64_t seed, double fraction = 1e-6);

}  // namespace untangle

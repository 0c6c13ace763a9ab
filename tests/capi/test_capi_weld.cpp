// Sewn panels through the C ABI: a sheet cut into two pieces along a seam of coincident vertices
// (as pattern tools and exporters write them), crossed by a third sheet next to the seam. The
// untangler must free it and keep every seam copy on its partner, in one state and in a
// sequence; detection of the output (ut_detect) is the independent check of the crossing.
#include <cmath>
#include <cstddef>
#include <string>
#include <utility>

#include "fixtures.hpp"

using namespace fixtures;

namespace {

// The horizontal sheet of fixtures.hpp (z = 0 over [-1, 1]^2, cells of 0.2) as two panels cut
// at x = 0: each has its own copy of the 11 seam vertices. `shift` moves the crossing sheet
// along y, `gap` the right panel along x (a pattern layout, not sewn).
std::vector<Sheet> sewn_panels_and_crossing(float shift = 0.0f, double gap = 0.0) {
  auto panel = [](double x0) {
    return grid(5, 10, [x0](double u, double v) {
      return std::array<float, 3>{float(x0 + u), float(-1 + 2 * v), 0.0f};
    });
  };
  Sheet crossing = vertical_sheet();  // the plane x = 0.05, 0.05 from the seam
  for (std::size_t i = 1; i < crossing.positions.size(); i += 3) crossing.positions[i] += shift;
  return {panel(-1.0), panel(gap), crossing};
}

std::uint64_t pairs_of(const std::vector<Sheet>& sheets) {
  ScenePtr scene = make_scene(sheets);
  UtFrameStats stats;
  stats.struct_size = sizeof stats;
  EXPECT_EQ(ut_detect(scene.get(), nullptr, &stats, nullptr, 0), UT_OK) << last_error();
  return stats.pairs;
}

// The seam: vertex (column 5, row j) of the left panel and (column 0, row j) of the right one,
// as indices into all pieces' vertices.
std::vector<std::pair<std::size_t, std::size_t>> seam_copies() {
  std::vector<std::pair<std::size_t, std::size_t>> copies;
  for (std::size_t j = 0; j <= 10; ++j) copies.push_back({j * 6 + 5, 66 + j * 6});
  return copies;
}

// The largest distance between a seam vertex's two copies, and the largest move of a seam
// vertex from the input.
std::pair<double, double> seam_gap_and_move(const float* output, const float* input) {
  auto at = [](const float* xyz, std::size_t v) {
    return std::array<double, 3>{xyz[3 * v], xyz[3 * v + 1], xyz[3 * v + 2]};
  };
  auto distance = [](const std::array<double, 3>& a, const std::array<double, 3>& b) {
    return std::sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
                     (a[2] - b[2]) * (a[2] - b[2]));
  };
  double gap = 0, move = 0;
  for (const auto& [a, b] : seam_copies()) {
    gap = std::max(gap, distance(at(output, a), at(output, b)));
    move = std::max(move, distance(at(output, a), at(input, a)));
  }
  return {gap, move};
}

}  // namespace

// Property: the crossing is freed (no pair in the output, by ut_detect), the seam vertices moved
// to free it, and each stayed bit-identical to its copy. Without the weld the proximity push
// opens this seam (its copies are closer than the thickness).
TEST(CapiWeld, SewnPanelsStaySewnWhenUntangled) {
  const std::vector<Sheet> sheets = sewn_panels_and_crossing();
  ASSERT_GT(pairs_of(sheets), 0u);
  ScenePtr scene = make_scene(sheets);
  const std::vector<float> input = concatenated(sheets);
  for (const auto& [a, b] : seam_copies()) {
    for (int k = 0; k < 3; ++k) ASSERT_EQ(input[3 * a + k], input[3 * b + k]);
  }
  std::vector<float> output(input.size(), NAN);
  UtUntangleReport report;
  report.struct_size = sizeof report;
  ASSERT_EQ(ut_untangle(scene.get(), nullptr, nullptr, nullptr, output.data(), input.size() / 3,
                        &report, nullptr, nullptr),
            UT_OK)
      << last_error();
  EXPECT_EQ(report.pairs_after, 0u);
  for (float x : output) ASSERT_TRUE(std::isfinite(x));
  EXPECT_EQ(pairs_of(moved_to(sheets, output.data())), 0u);
  const auto [gap, move] = seam_gap_and_move(output.data(), input.data());
  EXPECT_GT(move, 1e-4) << "the seam must take part, or the test shows nothing";
  EXPECT_EQ(gap, 0.0);
}

// Property: with keep_seams_apart the copies are separate vertices again, and this seam opens
// (the proximity push between the copies); the crossing is still freed. A value other than 0
// or 1 is refused.
TEST(CapiWeld, KeepSeamsApartLeavesTheCopiesSeparate) {
  const std::vector<Sheet> sheets = sewn_panels_and_crossing();
  ScenePtr scene = make_scene(sheets);
  const std::vector<float> input = concatenated(sheets);
  UtUntangleOptions options;
  ASSERT_EQ(ut_untangle_options_init(&options, sizeof options), UT_OK);
  EXPECT_EQ(options.keep_seams_apart, 0);
  options.keep_seams_apart = 1;
  std::vector<float> output(input.size(), NAN);
  ASSERT_EQ(ut_untangle(scene.get(), nullptr, &options, nullptr, output.data(), input.size() / 3,
                        nullptr, nullptr, nullptr),
            UT_OK)
      << last_error();
  EXPECT_EQ(pairs_of(moved_to(sheets, output.data())), 0u);
  EXPECT_GT(seam_gap_and_move(output.data(), input.data()).first, 1e-3);
  options.keep_seams_apart = 2;
  EXPECT_EQ(ut_untangle(scene.get(), nullptr, &options, nullptr, output.data(), input.size() / 3,
                        nullptr, nullptr, nullptr),
            UT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(last_error()).find("keep_seams_apart"), std::string::npos);
}

// Property: the same in every frame of a sequence whose seam copies coincide in every frame; the
// scene's own positions (here the panels laid out apart) only give the topology.
TEST(CapiWeld, SewnPanelsStaySewnInEveryFrameOfASequence) {
  const std::vector<Sheet> sheets = sewn_panels_and_crossing();
  ScenePtr scene = make_scene(sewn_panels_and_crossing(0.0f, 0.5));
  const std::size_t n = concatenated(sheets).size() / 3;
  std::vector<float> frames;
  for (int f = 0; f < 2; ++f) {  // the crossing slides along the seam
    const std::vector<float> frame = concatenated(sewn_panels_and_crossing(0.07f * float(f)));
    frames.insert(frames.end(), frame.begin(), frame.end());
  }
  std::vector<float> output(frames.size(), NAN);
  std::size_t done = 0;
  ASSERT_EQ(ut_untangle_sequence(scene.get(), nullptr, nullptr, frames.data(), 2, n, output.data(),
                                 nullptr, &done, nullptr, nullptr),
            UT_OK)
      << last_error();
  ASSERT_EQ(done, 2u);
  for (std::size_t f = 0; f < 2; ++f) {
    const float* frame = output.data() + 3 * n * f;
    EXPECT_EQ(pairs_of(moved_to(sheets, frame)), 0u) << "frame " << f;
    const auto [gap, move] = seam_gap_and_move(frame, frames.data() + 3 * n * f);
    EXPECT_GT(move, 1e-4) << "frame " << f;
    EXPECT_EQ(gap, 0.0) << "frame " << f;
  }
}

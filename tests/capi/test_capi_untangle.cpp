// Detect-only and the untangler through the C ABI: detection results against the hand-built
// crossing, untangled output free of intersections (checked by detecting it again), inputs
// left alone, progress callbacks that see every iteration and can cancel, and sequences.
#include <cmath>
#include <cstddef>
#include <cstring>

#include "fixtures.hpp"

using namespace fixtures;

namespace {

UtFrameStats detect(const std::vector<Sheet>& sheets, std::vector<std::uint8_t>* flags = nullptr) {
  ScenePtr scene = make_scene(sheets);
  UtFrameStats stats;
  stats.struct_size = sizeof stats;
  std::size_t faces = 0;
  for (const Sheet& sheet : sheets) faces += sheet.face_count();
  if (flags != nullptr) flags->assign(faces, 7);
  EXPECT_EQ(ut_detect(scene.get(), nullptr, &stats, flags != nullptr ? flags->data() : nullptr,
                      flags != nullptr ? faces : 0),
            UT_OK)
      << last_error();
  return stats;
}

struct Calls {
  int count = 0;
  int cancel_at = -1;
  int last_done = -1;
  int total = -1;
  bool increasing = true;
};

int32_t record(void* user_data, int32_t done, int32_t total, uint64_t /*pairs*/) {
  auto* calls = static_cast<Calls*>(user_data);
  calls->increasing = calls->increasing && done > calls->last_done;
  calls->last_done = done;
  calls->total = total;
  ++calls->count;
  return calls->count == calls->cancel_at ? 0 : 1;
}

}  // namespace

// Property: detect-only flags exactly the cells the crossing line passes (fixtures.hpp), over
// both pieces in global polygon order, and counts one boundary contour.
TEST(CapiDetect, FlagsTheCrossedCellsOfBothPieces) {
  std::vector<std::uint8_t> flags;
  const UtFrameStats stats = detect({horizontal_sheet(), vertical_sheet()}, &flags);
  ASSERT_EQ(flags.size(), 150u);
  for (std::size_t f = 0; f < flags.size(); ++f) {
    const bool in_a = f < 100 && f % 10 == 5 && f / 10 >= 2 && f / 10 <= 7;
    const bool in_b = f >= 100 && (f - 100) / 5 == 4;
    EXPECT_EQ(flags[f], (in_a || in_b) ? 1 : 0) << "polygon " << f;
  }
  EXPECT_EQ(stats.contours_boundary, 1u);
  EXPECT_EQ(stats.frame, 0u);
  EXPECT_GT(stats.hits, 0u);
}

// Property: untangling a corner poking through a sheet leaves no intersection (detected again
// from the output), reports the pairs it started from, and does not modify its inputs.
TEST(CapiUntangle, PokingCornerComesOutFree) {
  const std::vector<Sheet> sheets = poking_corner();
  const UtFrameStats before = detect(sheets);
  ASSERT_GT(before.pairs, 0u);
  ScenePtr scene = make_scene(sheets);
  const std::vector<float> input = concatenated(sheets);
  std::vector<float> output(input.size(), NAN);
  UtUntangleReport report;
  report.struct_size = sizeof report;
  Calls calls;
  ASSERT_EQ(ut_untangle(scene.get(), nullptr, nullptr, nullptr, output.data(), input.size() / 3,
                        &report, record, &calls),
            UT_OK)
      << last_error();
  EXPECT_EQ(report.pairs_before, before.pairs);
  EXPECT_EQ(report.pairs_after, 0u);
  EXPECT_EQ(report.cancelled, 0);
  EXPECT_EQ(calls.count, report.iterations);
  EXPECT_TRUE(calls.increasing);
  EXPECT_EQ(calls.total, 1000);
  // The first clean state comes within the iterations run (the rest relax), and the stages'
  // times (ABI 1.2) are each part of the call's time: detection and the solver ran, the
  // proximity searches and the strain-limit sweeps (ABI 1.3; the default limit runs them) are
  // disjoint parts of the solver's.
  EXPECT_GE(report.iterations_to_clean, 1);
  EXPECT_LE(report.iterations_to_clean, report.iterations);
  EXPECT_GT(report.seconds_detection, 0);
  EXPECT_GT(report.seconds_solver, 0);
  EXPECT_GE(report.seconds_analysis, 0);
  EXPECT_GE(report.seconds_response, 0);
  EXPECT_LE(report.seconds_proximity, report.seconds_solver);
  EXPECT_GT(report.seconds_strain_limit, 0);
  EXPECT_LE(report.seconds_proximity + report.seconds_strain_limit, report.seconds_solver);
  EXPECT_LE(report.seconds_detection + report.seconds_analysis + report.seconds_response +
                report.seconds_solver,
            report.seconds);
  for (float x : output) ASSERT_TRUE(std::isfinite(x));
  EXPECT_EQ(detect(moved_to(sheets, output.data())).pairs, 0u);
  EXPECT_EQ(concatenated(sheets), input);  // the scene's copy was not modified either
  std::vector<float> again(input.size());
  ASSERT_EQ(ut_untangle(scene.get(), nullptr, nullptr, nullptr, again.data(), again.size() / 3,
                        nullptr, nullptr, nullptr),
            UT_OK);
  EXPECT_EQ(again, output) << "the scene's positions must still be the input";
}

// Property: a callback returning 0 stops the untangler at that iteration with
// UT_ERROR_CANCELLED, and the output and report still hold the state reached.
TEST(CapiUntangle, ProgressCallbackCancels) {
  const std::vector<Sheet> sheets = {horizontal_sheet(), vertical_sheet()};
  ScenePtr scene = make_scene(sheets);
  std::vector<float> output(concatenated(sheets).size(), NAN);
  UtUntangleReport report;
  report.struct_size = sizeof report;
  Calls calls;
  calls.cancel_at = 2;
  EXPECT_EQ(ut_untangle(scene.get(), nullptr, nullptr, nullptr, output.data(), output.size() / 3,
                        &report, record, &calls),
            UT_ERROR_CANCELLED);
  EXPECT_THAT(last_error(), ::testing::HasSubstr("cancelled"));
  EXPECT_EQ(calls.count, 2);
  EXPECT_EQ(report.cancelled, 1);
  EXPECT_EQ(report.iterations, 2);
  for (float x : output) ASSERT_TRUE(std::isfinite(x));
}

// Property: pinned vertices (inverse mass 0) do not move.
TEST(CapiUntangle, PinnedVerticesStayPut) {
  const std::vector<Sheet> sheets = poking_corner();
  const Sheet &a = sheets[0], &b = sheets[1];
  std::vector<float> masses(b.vertex_count(), 0.0f);  // the square pinned: the sheet gives way
  ScenePtr scene = make_scene({a});
  ASSERT_EQ(add(scene.get(), b, masses.data()), UT_OK);
  std::vector<float> output(a.positions.size() + b.positions.size());
  UtUntangleReport report;
  report.struct_size = sizeof report;
  ASSERT_EQ(ut_untangle(scene.get(), nullptr, nullptr, nullptr, output.data(), output.size() / 3,
                        &report, nullptr, nullptr),
            UT_OK)
      << last_error();
  EXPECT_TRUE(
      std::equal(b.positions.begin(), b.positions.end(), output.begin() + a.positions.size()));
}

// Property: a sequence gives one finished, intersection-free frame per input frame; a cancel
// after the first frame keeps exactly that frame.
TEST(CapiUntangle, SequenceUntanglesEveryFrameAndCancelsBetweenFrames) {
  const std::vector<Sheet> sheets = poking_corner();
  ScenePtr scene = make_scene(sheets);
  const std::size_t n = concatenated(sheets).size() / 3;
  std::vector<float> frames;
  for (int f = 0; f < 3; ++f) {  // the square rises a little every frame
    const std::vector<float> frame = concatenated(poking_corner(0.01f * float(f)));
    frames.insert(frames.end(), frame.begin(), frame.end());
  }
  std::vector<float> output(frames.size(), NAN);
  std::vector<UtUntangleReport> reports(3);
  reports[0].struct_size = sizeof(UtUntangleReport);
  std::size_t done = 0;
  Calls calls;
  ASSERT_EQ(ut_untangle_sequence(scene.get(), nullptr, nullptr, frames.data(), 3, n, output.data(),
                                 reports.data(), &done, record, &calls),
            UT_OK)
      << last_error();
  EXPECT_EQ(done, 3u);
  EXPECT_EQ(calls.count, 3);
  EXPECT_EQ(calls.total, 3);
  for (int f = 0; f < 3; ++f) {
    EXPECT_EQ(reports[f].struct_size, sizeof(UtUntangleReport));
    EXPECT_GT(reports[f].pairs_before, 0u);
    EXPECT_EQ(reports[f].pairs_after, 0u);
    const std::vector<float> frame(output.begin() + 3 * n * f, output.begin() + 3 * n * (f + 1));
    EXPECT_EQ(detect(moved_to(sheets, frame.data())).pairs, 0u) << "frame " << f;
  }

  std::vector<float> partial(frames.size(), -1.0f);
  Calls stop;
  stop.cancel_at = 1;
  EXPECT_EQ(ut_untangle_sequence(scene.get(), nullptr, nullptr, frames.data(), 3, n, partial.data(),
                                 nullptr, &done, record, &stop),
            UT_ERROR_CANCELLED);
  EXPECT_EQ(done, 1u);
  EXPECT_TRUE(std::equal(output.begin(), output.begin() + 3 * n, partial.begin()));
  EXPECT_EQ(partial[3 * n], -1.0f) << "unfinished frames are not written";
}

// Property: a caller built against ABI 1.2 (its report ends before seconds_strain_limit) gets
// every field it knows, and the bytes past its struct_size are not written: for one state, and
// for a sequence whose reports are laid out at that older stride.
TEST(CapiUntangle, AnOlderReportGetsItsFieldsAndNothingBeyond) {
  const std::vector<Sheet> sheets = poking_corner();
  ScenePtr scene = make_scene(sheets);
  const std::vector<float> input = concatenated(sheets);
  const std::size_t n = input.size() / 3;
  constexpr std::size_t kOlder = offsetof(UtUntangleReport, seconds_strain_limit);
  constexpr double kUntouched = -7.0;
  std::vector<float> output(input.size());
  UtUntangleReport report;
  report.struct_size = kOlder;
  report.seconds_proximity = kUntouched;
  report.seconds_strain_limit = kUntouched;
  ASSERT_EQ(ut_untangle(scene.get(), nullptr, nullptr, nullptr, output.data(), n, &report, nullptr,
                        nullptr),
            UT_OK)
      << last_error();
  EXPECT_EQ(report.struct_size, kOlder);
  EXPECT_EQ(report.pairs_after, 0u);
  EXPECT_GE(report.seconds_proximity, 0);
  EXPECT_EQ(report.seconds_strain_limit, kUntouched);

  // Two frames' reports packed at the older stride, followed by a guard that must stay as it is.
  std::vector<unsigned char> reports(2 * kOlder + sizeof(double), 0xAB);
  const std::vector<unsigned char> guard(reports.end() - sizeof(double), reports.end());
  UtUntangleReport first{};
  first.struct_size = kOlder;
  std::memcpy(reports.data(), &first, kOlder);
  std::vector<float> frames = input;
  frames.insert(frames.end(), input.begin(), input.end());
  std::vector<float> outputs(frames.size());
  std::size_t done = 0;
  ASSERT_EQ(ut_untangle_sequence(scene.get(), nullptr, nullptr, frames.data(), 2, n, outputs.data(),
                                 reinterpret_cast<UtUntangleReport*>(reports.data()), &done,
                                 nullptr, nullptr),
            UT_OK)
      << last_error();
  EXPECT_EQ(done, 2u);
  for (std::size_t f = 0; f < 2; ++f) {
    UtUntangleReport frame{};
    std::memcpy(&frame, reports.data() + f * kOlder, kOlder);
    EXPECT_EQ(frame.struct_size, kOlder) << f;
    EXPECT_EQ(frame.pairs_after, 0u) << f;
    EXPECT_GT(frame.seconds, 0) << f;
    EXPECT_LE(frame.seconds_solver, frame.seconds) << f;
  }
  EXPECT_TRUE(std::equal(guard.begin(), guard.end(), reports.end() - sizeof(double)));
}

// Property: an empty sequence is finished at once, and its (empty) report array is not read:
// the element after its end holds a struct_size no report has.
TEST(CapiUntangle, EmptySequenceReadsNoReport) {
  ScenePtr scene = make_scene({horizontal_sheet()});
  UtUntangleReport past_the_end;
  past_the_end.struct_size = 3;
  std::size_t done = 7;
  EXPECT_EQ(ut_untangle_sequence(scene.get(), nullptr, nullptr, nullptr, 0, 121, nullptr,
                                 &past_the_end, &done, nullptr, nullptr),
            UT_OK)
      << last_error();
  EXPECT_EQ(done, 0u);
  EXPECT_EQ(past_the_end.struct_size, 3u);
}

// Property: bad arguments to the untangler are refused before any work, naming the problem.
TEST(CapiUntangle, BadArgumentsAreRefused) {
  ScenePtr scene = make_scene({horizontal_sheet()});
  std::vector<float> output(3 * 121);
  EXPECT_EQ(ut_untangle(scene.get(), nullptr, nullptr, nullptr, output.data(), 120, nullptr,
                        nullptr, nullptr),
            UT_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(last_error(), ::testing::HasSubstr("121"));
  UtUntangleOptions options;
  ASSERT_EQ(ut_untangle_options_init(&options, sizeof options), UT_OK);
  EXPECT_EQ(options.max_iterations, 1000);
  options.max_iterations = -4;
  EXPECT_EQ(ut_untangle(scene.get(), nullptr, &options, nullptr, output.data(), 121, nullptr,
                        nullptr, nullptr),
            UT_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(last_error(), ::testing::HasSubstr("max_iterations"));
  std::vector<float> rest(3 * 121, NAN);
  EXPECT_EQ(ut_untangle(scene.get(), nullptr, nullptr, rest.data(), output.data(), 121, nullptr,
                        nullptr, nullptr),
            UT_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(last_error(), ::testing::HasSubstr("rest"));
}

// Property: the strain limit of the options bounds the output's edge strain against the input,
// measured here on the polygons' sides (independently of the library's own report); a caller
// of the older struct size (without the field) gets the default and its stale field is ignored.
TEST(CapiUntangle, StrainLimitBoundsTheOutputAndOldCallersGetTheDefault) {
  const std::vector<Sheet> sheets = poking_corner();
  ScenePtr scene = make_scene(sheets);
  const std::vector<float> input = concatenated(sheets);
  UtUntangleOptions options;
  ASSERT_EQ(ut_untangle_options_init(&options, sizeof options), UT_OK);
  EXPECT_DOUBLE_EQ(options.strain_limit, 0.045);
  options.strain_limit = 0.002;  // without a limit this case stretches by 0.7 %
  std::vector<float> output(input.size());
  UtUntangleReport report;
  report.struct_size = sizeof report;
  ASSERT_EQ(ut_untangle(scene.get(), nullptr, &options, nullptr, output.data(), input.size() / 3,
                        &report, nullptr, nullptr),
            UT_OK)
      << last_error();
  EXPECT_EQ(report.pairs_after, 0u);
  double strain = 0;
  std::size_t base = 0;
  for (const Sheet& sheet : sheets) {
    std::size_t corner = 0;
    for (std::uint32_t size : sheet.face_sizes) {
      for (std::uint32_t k = 0; k < size; ++k) {
        const std::size_t a = base + sheet.face_indices[corner + k];
        const std::size_t b = base + sheet.face_indices[corner + (k + 1) % size];
        double before = 0, after = 0;
        for (int c = 0; c < 3; ++c) {
          before += std::pow(input[3 * b + c] - input[3 * a + c], 2);
          after += std::pow(output[3 * b + c] - output[3 * a + c], 2);
        }
        strain = std::max(strain, std::abs(std::sqrt(after / before) - 1));
      }
      corner += size;
    }
    base += sheet.vertex_count();
  }
  EXPECT_LE(strain, 0.002 + 2e-4);  // the solver stops within 1e-4 of the limit
  EXPECT_NEAR(report.max_edge_strain, strain, 1e-4);

  options.strain_limit = 1.5;
  EXPECT_EQ(ut_untangle(scene.get(), nullptr, &options, nullptr, output.data(), input.size() / 3,
                        nullptr, nullptr, nullptr),
            UT_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(last_error(), ::testing::HasSubstr("strain_limit"));
  options.struct_size = offsetof(UtUntangleOptions, strain_limit);
  EXPECT_EQ(ut_untangle(scene.get(), nullptr, &options, nullptr, output.data(), input.size() / 3,
                        nullptr, nullptr, nullptr),
            UT_OK)
      << last_error();
}

#include "stage_report.hpp"

#include <cstdio>

namespace untangle::cli {

void write_stage_seconds(JsonWriter& out, const UtUntangleReport& report) {
  out.key("stage_seconds")
      .begin_object()
      .field("detection", report.seconds_detection)
      .field("analysis", report.seconds_analysis)
      .field("response", report.seconds_response)
      .field("solver", report.seconds_solver)
      .field("proximity", report.seconds_proximity)
      .field("strain_limit", report.seconds_strain_limit)
      .end_object();
}

void print_stage_milliseconds(const UtUntangleReport& report, long long iterations,
                              const char* indent) {
  if (iterations <= 0) return;
  const double per = 1000.0 / static_cast<double>(iterations);
  std::printf(
      "%sms per iteration: detection %.2f, analysis %.2f, response %.2f, solver %.2f "
      "(proximity %.2f, strain limit %.2f)\n",
      indent, per * report.seconds_detection, per * report.seconds_analysis,
      per * report.seconds_response, per * report.seconds_solver, per * report.seconds_proximity,
      per * report.seconds_strain_limit);
}

}  // namespace untangle::cli

#include "untangle/settings.hpp"

#include <array>
#include <cmath>
#include <sstream>
#include <string>

namespace untangle {
namespace {

// In the order of Method's values.
constexpr std::array<std::string_view, 4> kMethodNames{"icm", "kikuchi", "ye", "buffet"};

// Ranges are wide on purpose: they reject what cannot work (negative, NaN, absurd), not what
// is merely unusual, so callers can still experiment.
void check_range(std::string_view field, double value, double low, double high,
                 bool low_open = false) {
  const bool below = low_open ? !(value > low) : !(value >= low);
  if (!std::isfinite(value) || below || !(value <= high)) {
    std::ostringstream out;
    out << field << " must be in " << (low_open ? "(" : "[") << low << ", " << high << "], got "
        << value;
    throw std::invalid_argument(out.str());
  }
}

}  // namespace

std::string_view method_name(Method method) {
  const auto index = static_cast<std::size_t>(method);
  return index < kMethodNames.size() ? kMethodNames[index] : "unknown";
}

std::optional<Method> method_from_name(std::string_view name) {
  for (std::size_t i = 0; i < kMethodNames.size(); ++i) {
    if (kMethodNames[i] == name) return static_cast<Method>(i);
  }
  return std::nullopt;
}

std::span<const std::string_view> method_names() {
  return kMethodNames;
}

void validate(const Settings& settings) {
  const int method = static_cast<int>(settings.method);
  if (method < 0 || method >= static_cast<int>(kMethodNames.size())) {
    std::string known;
    for (const std::string_view name : kMethodNames) {
      known += (known.empty() ? "" : ", ") + std::string(name);
    }
    throw std::invalid_argument("method must be one of " + known + ", got " +
                                std::to_string(method));
  }
  check_range("response_strength", settings.response_strength, 0, 100);
  // In the mesh's units: 1000 leaves room for millimetres. (The untangler and the worlds use at
  // most half the mean edge length of it, kMaxThicknessPerSpacing.)
  check_range("thickness", settings.thickness, 0, 1000);
  check_range("iterations", settings.iterations, 1, 1000);
  check_range("time_step", settings.time_step, 0, 1, true);
  for (int axis = 0; axis < 3; ++axis) {
    static constexpr std::array<std::string_view, 3> kNames{"gravity.x", "gravity.y", "gravity.z"};
    check_range(kNames[axis], settings.gravity[axis], -1000, 1000);
  }
  check_range("friction", settings.friction, 0, 10);
  check_range("stretch_compliance", settings.stretch_compliance, 0, 1e6);
  check_range("bending_compliance", settings.bending_compliance, 0, 1e6);
  check_range("max_speed", settings.max_speed, 0, 1e6, true);
  check_range("spacing", settings.spacing, 0, 1e6);
  check_range("threads", settings.threads, 0, 1024);
}

}  // namespace untangle

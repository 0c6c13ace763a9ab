#include "untangle/kdop.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace untangle {

namespace {
constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

Kdop18::Kdop18() {
  min.fill(kInf);
  max.fill(-kInf);
}

Vec3 Kdop18::axis(int k) {
  static const std::array<Vec3, kAxes> kAxisDirections = {Vec3(1, 0, 0),
                                                          Vec3(0, 1, 0),
                                                          Vec3(0, 0, 1),
                                                          Vec3(kInvSqrt2, kInvSqrt2, 0),
                                                          Vec3(kInvSqrt2, -kInvSqrt2, 0),
                                                          Vec3(kInvSqrt2, 0, kInvSqrt2),
                                                          Vec3(kInvSqrt2, 0, -kInvSqrt2),
                                                          Vec3(0, kInvSqrt2, kInvSqrt2),
                                                          Vec3(0, kInvSqrt2, -kInvSqrt2)};
  return kAxisDirections.at(static_cast<std::size_t>(k));
}

void Kdop18::merge(const Kdop18& other) {
  for (int k = 0; k < kAxes; ++k) {
    min[k] = std::min(min[k], other.min[k]);
    max[k] = std::max(max[k], other.max[k]);
  }
}

void Kdop18::inflate(double distance) {
  if (empty()) return;  // an empty volume stays empty (inf - d is still inf)
  for (int k = 0; k < kAxes; ++k) {
    min[k] -= distance;
    max[k] += distance;
  }
}

bool Kdop18::empty() const {
  return !(min[0] <= max[0]);
}

bool Kdop18::contains(const Vec3& p) const {
  const auto d = project(p);
  for (int k = 0; k < kAxes; ++k) {
    if (d[k] < min[k] || d[k] > max[k]) return false;
  }
  return true;
}

std::array<Vec3, 8> Kdop18::box_corners() const {
  std::array<Vec3, 8> corners;
  for (int c = 0; c < 8; ++c) {
    corners[c] =
        Vec3((c & 1) ? max[0] : min[0], (c & 2) ? max[1] : min[1], (c & 4) ? max[2] : min[2]);
  }
  return corners;
}

Kdop18f::Kdop18f(const Kdop18& volume) {
  // Widened by 2^-22 of the value (more than half a float's spacing, the most that rounding to
  // the nearest float moves it) and by a tiny absolute amount (values near zero), before that
  // rounding, so each bound moves outwards. Clamped to the finite floats, so that a huge bound
  // does not round to an infinity on the wrong side. Plain arithmetic: it vectorises.
  constexpr double kRelative = 0x1p-22;
  constexpr double kAbsolute = 1e-30;
  constexpr double kFloatMax = std::numeric_limits<float>::max();
  for (int k = 0; k < Kdop18::kAxes; ++k) {
    const double lo = volume.min[k];
    const double hi = volume.max[k];
    min[k] = static_cast<float>(
        std::min(lo * (lo > 0 ? 1 - kRelative : 1 + kRelative) - kAbsolute, kFloatMax));
    max[k] = static_cast<float>(
        std::max(hi * (hi > 0 ? 1 + kRelative : 1 - kRelative) + kAbsolute, -kFloatMax));
  }
}

}  // namespace untangle

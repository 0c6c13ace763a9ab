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

}  // namespace untangle

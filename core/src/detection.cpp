#include "untangle/detection.hpp"

#include <omp.h>

#include <cstring>

namespace untangle {

Detection::Detection(const ClothMesh& mesh, const Positions& positions)
    : mesh_(&mesh), bvh_(mesh, positions), built_on_(positions) {}
Detection::~Detection() = default;
Detection::Detection(Detection&&) noexcept = default;
Detection& Detection::operator=(Detection&&) noexcept = default;

void Detection::run(const Positions& x, double inflation, bool cull) {
  const double start = omp_get_wtime();
  // Bit for bit the build's positions (not ==, which takes -0 for 0): the refit would repeat it.
  const bool as_built = inflation == 0 && x.size() == built_on_.size() &&
                        std::memcmp(x.data(), built_on_.data(), x.size() * sizeof(Vec3)) == 0;
  Positions().swap(built_on_);
  if (!as_built) bvh_.refit(x, inflation);
  seconds_.refit = omp_get_wtime() - start;
  find_intersections(*mesh_, bvh_, x, DetectOptions{cull}, &buffers_, intersections_);
  seconds_.broad = intersections_.broad_seconds;
  seconds_.narrow = intersections_.narrow_seconds;
  trace_contours(*mesh_, x, intersections_, contours_);
  seconds_.contours = contours_.seconds;
}

}  // namespace untangle

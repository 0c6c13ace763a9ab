// Detection: the one stage that finds the intersections of a state (SPEC frame pipeline, steps
// 2-4): BVH refit, broad and narrow phase, contours. The World's frame, the C ABI's ut_detect and
// the untangler all run it; nobody else calls the BVH and the narrow phase in sequence.
#pragma once

#include "untangle/contours.hpp"

namespace untangle {

struct DetectionSeconds {
  double refit = 0, broad = 0, narrow = 0, contours = 0;
  double total() const { return refit + broad + narrow + contours; }
};

class Detection {
 public:
  // Builds the BVH on the mesh at `positions`; the mesh must outlive the detection.
  Detection(const ClothMesh& mesh, const Positions& positions);
  ~Detection();
  Detection(Detection&&) noexcept;
  Detection& operator=(Detection&&) noexcept;

  // Refits the BVH to x, its volumes inflated by `inflation` (the proximity search shares the
  // tree), and finds the intersections and contours of x, writing over the last ones.
  void run(const Positions& x, double inflation = 0.0, bool cull = true);

  const ClothMesh& mesh() const { return *mesh_; }
  const Bvh& bvh() const { return bvh_; }
  const Intersections& intersections() const { return intersections_; }
  const Contours& contours() const { return contours_; }
  const DetectionSeconds& seconds() const { return seconds_; }

 private:
  const ClothMesh* mesh_;
  Bvh bvh_;
  // The positions the BVH was built and refit on, kept until the first run: a one-shot detection
  // of those very positions (ut_detect, `untangle detect`) then skips a second, identical refit.
  Positions built_on_;
  NarrowPhaseBuffers buffers_;
  Intersections intersections_;
  Contours contours_;
  DetectionSeconds seconds_;
};

}  // namespace untangle

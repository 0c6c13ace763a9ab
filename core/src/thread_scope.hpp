// ThreadScope: the one place where a call of the engine sets its OpenMP team size.
#pragma once

#include <omp.h>

#include <cstddef>

namespace untangle {

// Tiny meshes run on one thread unless the caller asks for more: a team of threads waiting at
// every barrier costs more than the work, and far more on a loaded machine.
constexpr std::size_t kSerialBelowVertices = 500;

// Sets the OpenMP team size for the lifetime of one call and restores the caller's afterwards,
// so a world's thread setting does not leak into the rest of the program.
class ThreadScope {
 public:
  ThreadScope(int threads, std::size_t vertices)
      : previous_(omp_get_max_threads()), active_(threads > 0 || vertices < kSerialBelowVertices) {
    if (threads == 0) threads = 1;
    if (active_) omp_set_num_threads(threads);
  }
  ~ThreadScope() {
    if (active_) omp_set_num_threads(previous_);
  }
  ThreadScope(const ThreadScope&) = delete;
  ThreadScope& operator=(const ThreadScope&) = delete;

 private:
  int previous_;
  bool active_;
};

}  // namespace untangle

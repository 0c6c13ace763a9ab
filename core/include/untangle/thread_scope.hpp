// Threads: the one place where the OpenMP team size is set: the process default (the C ABI's
// ut_set_threads) and, around each call of the engine, a world's or a call's own setting.
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

// OpenMP's default team size before anything here changed it, so that 0 can restore it.
inline int initial_default_threads() {
  static const int kInitial = omp_get_max_threads();
  return kInitial;
}

// The team size of work started from the calling thread when a call asks for none (threads = 0
// in its settings); 0 restores OpenMP's own default.
inline void set_default_threads(int threads) {
  const int initial = initial_default_threads();
  omp_set_num_threads(threads == 0 ? initial : threads);
}

inline int default_threads() {
  return omp_get_max_threads();
}

}  // namespace untangle

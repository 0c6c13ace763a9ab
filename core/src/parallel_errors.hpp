#pragma once

#include <atomic>
#include <exception>

namespace untangle {

// An exception must not leave an OpenMP region: the runtime would call std::terminate and take
// the host program (Blender, through the C ABI) down with it. Each parallel body that can throw
// (std::bad_alloc from a growing vector, in practice) runs through run(), which keeps the first
// exception and makes the remaining bodies return at once; rethrow(), after the region, hands it
// to the caller on the calling thread. Bodies inside a region with barriers must still let every
// thread reach them: run() returns normally, so the caller's loop goes on.
class ParallelErrors {
 public:
  template <class Body>
  void run(Body&& body) noexcept {
    if (failed_.load(std::memory_order_relaxed)) return;
    try {
      body();
    } catch (...) {
#pragma omp critical(untangle_parallel_errors)
      {
        if (!error_) error_ = std::current_exception();
      }
      failed_.store(true, std::memory_order_relaxed);
    }
  }

  bool failed() const {
    return failed_.load(std::memory_order_relaxed);
  }

  void rethrow() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::atomic<bool> failed_{false};
  std::exception_ptr error_;
};

}  // namespace untangle

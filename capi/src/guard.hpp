// The boundary of the C ABI: every export runs its body through guard(), which turns every C++
// exception into a UtStatus and a thread-local message, so nothing C++ crosses the ABI.
#pragma once

#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>

#include "untangle.h"

namespace untangle::capi {

// Thrown inside the ABI for a call the handle's state does not allow (UT_ERROR_INVALID_OPERATION).
// Any other std::logic_error is the engine's own check failing: an internal error.
class InvalidOperation : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// Thrown inside the ABI when a progress callback asked to stop.
class Cancelled : public std::exception {
 public:
  explicit Cancelled(std::string message) : message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

// The thread's message: prefix, then detail. Taking views, it allocates only inside (where a
// failure keeps the previous message), so it is safe in a catch of std::bad_alloc.
void set_last_error(std::string_view prefix, std::string_view detail = {}) noexcept;

// The status for the exception being handled; sets the message. Call only inside a catch.
UtStatus status_of_current_exception() noexcept;

template <class Body>
UtStatus guard(Body&& body) noexcept {
  try {
    body();
    return UT_OK;
  } catch (...) {
    return status_of_current_exception();
  }
}

}  // namespace untangle::capi

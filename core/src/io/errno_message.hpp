// errno_message: the reason the C library gives for the last failed file operation, for the
// messages of IoError.
#pragma once

#include <cerrno>
#include <string>
#include <system_error>

namespace untangle {

inline std::string errno_message() {
  return std::error_code(errno, std::generic_category()).message();
}

}  // namespace untangle

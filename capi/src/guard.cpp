// Status codes, the thread-local last error and the version query.
#include "guard.hpp"

#include <new>
#include <stdexcept>

#include "untangle/mesh.hpp"

namespace untangle::capi {

namespace {
thread_local std::string last_error;
}

void set_last_error(std::string_view prefix, std::string_view detail) noexcept {
  try {
    last_error.assign(prefix);
    last_error.append(detail);
  } catch (...) {
    // Out of memory while reporting: keep the previous message rather than fail again.
  }
}

UtStatus status_of_current_exception() noexcept {
  // The order matters: std::invalid_argument and std::length_error are std::logic_errors.
  try {
    throw;
  } catch (const std::bad_alloc&) {
    set_last_error("out of memory");
    return UT_ERROR_OUT_OF_MEMORY;
  } catch (const std::length_error& error) {
    set_last_error("out of memory: ", error.what());
    return UT_ERROR_OUT_OF_MEMORY;
  } catch (const Cancelled& cancelled) {
    set_last_error(cancelled.what());
    return UT_ERROR_CANCELLED;
  } catch (const MeshError& error) {
    set_last_error(error.what());
    return UT_ERROR_INVALID_MESH;
  } catch (const std::invalid_argument& error) {
    set_last_error(error.what());
    return UT_ERROR_INVALID_ARGUMENT;
  } catch (const std::out_of_range& error) {
    set_last_error("internal error (index out of range): ", error.what());
    return UT_ERROR_INTERNAL;
  } catch (const InvalidOperation& error) {
    set_last_error(error.what());
    return UT_ERROR_INVALID_OPERATION;
  } catch (const std::exception& error) {
    set_last_error("internal error: ", error.what());
    return UT_ERROR_INTERNAL;
  } catch (...) {
    set_last_error("internal error: an unknown exception");
    return UT_ERROR_INTERNAL;
  }
}

}  // namespace untangle::capi

extern "C" {

UT_API uint32_t ut_abi_version(void) {
  return (uint32_t{UT_ABI_VERSION_MAJOR} << 16) | (uint32_t{UT_ABI_VERSION_MINOR} << 8) |
         uint32_t{UT_ABI_VERSION_PATCH};
}

UT_API const char* ut_last_error(void) {
  return untangle::capi::last_error.c_str();
}

UT_API const char* ut_status_name(int32_t status) {
  switch (status) {
    case UT_OK:
      return "UT_OK";
    case UT_ERROR_INVALID_ARGUMENT:
      return "UT_ERROR_INVALID_ARGUMENT";
    case UT_ERROR_INVALID_MESH:
      return "UT_ERROR_INVALID_MESH";
    case UT_ERROR_INVALID_OPERATION:
      return "UT_ERROR_INVALID_OPERATION";
    case UT_ERROR_OUT_OF_MEMORY:
      return "UT_ERROR_OUT_OF_MEMORY";
    case UT_ERROR_CANCELLED:
      return "UT_ERROR_CANCELLED";
    case UT_ERROR_INTERNAL:
      return "UT_ERROR_INTERNAL";
    default:
      return "UT_UNKNOWN";
  }
}

}  // extern "C"

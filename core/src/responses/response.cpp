#include "untangle/response.hpp"

#include <stdexcept>
#include <string>

#include "untangle/responses/icm.hpp"

// The other methods are written in parallel with ICM; each joins the factory as soon as its
// header is in the tree.
#if __has_include("untangle/responses/kikuchi.hpp")
#include "untangle/responses/kikuchi.hpp"
#define UNTANGLE_HAS_KIKUCHI 1
#endif
#if __has_include("untangle/responses/ye.hpp")
#include "untangle/responses/ye.hpp"
#define UNTANGLE_HAS_YE 1
#endif
#if __has_include("untangle/responses/buffet.hpp")
#include "untangle/responses/buffet.hpp"
#define UNTANGLE_HAS_BUFFET 1
#endif

namespace untangle {
namespace {

[[noreturn]] void not_built(Method method) {
  throw std::invalid_argument("method " + std::string(method_name(method)) + " is not built yet");
}

}  // namespace

std::unique_ptr<Response> make_response(Method method) {
  switch (method) {
    case Method::kIcm:
      return std::make_unique<IcmResponse>();
    case Method::kKikuchi:
#ifdef UNTANGLE_HAS_KIKUCHI
      return std::make_unique<KikuchiResponse>();
#else
      not_built(method);
#endif
    case Method::kYe:
#ifdef UNTANGLE_HAS_YE
      return std::make_unique<YeResponse>();
#else
      not_built(method);
#endif
    case Method::kBuffet:
#ifdef UNTANGLE_HAS_BUFFET
      return std::make_unique<BuffetResponse>();
#else
      not_built(method);
#endif
  }
  throw std::invalid_argument("unknown method " + std::to_string(static_cast<int>(method)));
}

}  // namespace untangle

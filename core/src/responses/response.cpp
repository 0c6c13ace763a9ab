#include "untangle/response.hpp"

#include <stdexcept>
#include <string>

#include "untangle/responses/buffet.hpp"
#include "untangle/responses/icm.hpp"
#include "untangle/responses/kikuchi.hpp"
#include "untangle/responses/ye.hpp"

namespace untangle {

std::unique_ptr<Response> make_response(Method method) {
  switch (method) {
    case Method::kIcm:
      return std::make_unique<IcmResponse>();
    case Method::kKikuchi:
      return std::make_unique<KikuchiResponse>();
    case Method::kYe:
      return std::make_unique<YeResponse>();
    case Method::kBuffet:
      return std::make_unique<BuffetResponse>();
  }
  throw std::invalid_argument("unknown method " + std::to_string(static_cast<int>(method)));
}

}  // namespace untangle

// IoError: what reading or writing a mesh file throws (OBJ in io/obj.hpp, PC2 in io/pc2.hpp).
#pragma once

#include <stdexcept>

namespace untangle {

// Thrown for a file that cannot be read or written or whose content is malformed; the message
// names the file and, for OBJ, the line ("cloth.obj:12: face corner 7 ...").
class IoError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace untangle

// wisp::Error: the one exception type wisp throws inside the C++ layer.
// Messages name what is at fault (file, field, tensor, byte offset) so the user can act on them.
#pragma once

#include <stdexcept>
#include <string>

namespace wisp {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace wisp

// Internal error helpers: build a message from parts and throw lowbit::Error.
#pragma once

#include <sstream>
#include <string>

#include "lowbit/lowbit.hpp"

namespace lowbit {

template <typename... Parts>
std::string concat(const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  return os.str();
}

template <typename... Parts>
[[noreturn]] void fail(Status status, const Parts&... parts) {
  throw Error(status, concat(parts...));
}

}  // namespace lowbit

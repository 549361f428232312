#include "util/error.h"

namespace lowbit {

const char* status_name(Status s) {
  switch (s) {
    case Status::ok: return "ok";
    case Status::invalid_argument: return "invalid argument";
    case Status::unsupported: return "unsupported";
    case Status::corrupt_data: return "corrupt data";
    case Status::io_error: return "I/O error";
    case Status::out_of_memory: return "out of memory";
    case Status::internal: return "internal error";
  }
  return "unknown status";
}

}  // namespace lowbit

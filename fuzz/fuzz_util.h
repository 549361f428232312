// Shared pieces of the harnesses: inputs as files, and what a finding is.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "lowbit/lowbit.h"

namespace lowbit::fuzz {

// The input as a file (in memory): for readers that take a path.
class MemFile {
 public:
  MemFile(const uint8_t* data, size_t size) : fd_(memfd_create("fuzz", 0)) {
    if (fd_ < 0) std::abort();
    for (size_t done = 0; done < size;) {
      const ssize_t n = write(fd_, data + done, size - done);
      if (n <= 0) std::abort();
      done += size_t(n);
    }
  }
  ~MemFile() { close(fd_); }
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  int fd_;
};

// A bad input must come back as a status naming the problem, never as an internal error.
inline void expect_no_internal_error(lowbit_status s, const char* what) {
  if (s != LOWBIT_INTERNAL) return;
  std::fprintf(stderr, "%s: internal error: %s\n", what, lowbit_last_error());
  std::abort();
}

}  // namespace lowbit::fuzz

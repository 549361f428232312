// Reads a 2-D little-endian float32 C-order .npy file (the format numpy.save writes).
#pragma once

#include <string>
#include <vector>

namespace lowbit::cli {

struct NpyMatrix {
  int rows = 0, cols = 0;
  std::vector<float> data;
};

// Throws lowbit::Error (io_error / invalid_argument) naming the file and the problem.
NpyMatrix read_npy_f32(const std::string& path);

}  // namespace lowbit::cli

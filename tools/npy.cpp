#include "npy.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "util/error.h"

namespace lowbit::cli {

namespace {

// The text after `'key':` in a .npy header dict, spaces skipped ("" when absent).
std::string after_key(const std::string& header, const std::string& key) {
  const size_t p = header.find("'" + key + "':");
  if (p == std::string::npos) return "";
  size_t i = p + key.size() + 3;
  while (i < header.size() && header[i] == ' ') ++i;
  return header.substr(i);
}

}  // namespace

NpyMatrix read_npy_f32(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) fail(Status::io_error, "cannot open '", path, "'");
  char magic[8];
  if (!f.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    fail(Status::invalid_argument, "'", path, "' is not a .npy file");
  uint32_t header_len = 0;
  unsigned char len[4] = {0, 0, 0, 0};
  const int major = magic[6];
  if (!f.read(reinterpret_cast<char*>(len), major == 1 ? 2 : 4))
    fail(Status::invalid_argument, "'", path, "': truncated .npy header");
  header_len = uint32_t(len[0]) | uint32_t(len[1]) << 8 | uint32_t(len[2]) << 16 | uint32_t(len[3]) << 24;
  if (header_len > (1u << 20)) fail(Status::invalid_argument, "'", path, "': .npy header too large");
  std::string header(header_len, '\0');
  if (!f.read(header.data(), header_len)) fail(Status::invalid_argument, "'", path, "': truncated .npy header");
  if (after_key(header, "descr").rfind("'<f4'", 0) != 0)
    fail(Status::invalid_argument, "'", path, "': expected little-endian float32 ('<f4'), header: ", header);
  if (after_key(header, "fortran_order").rfind("False", 0) != 0)
    fail(Status::invalid_argument, "'", path, "': expected C order (fortran_order False)");
  long rows = 0, cols = 0;
  char close = 0;
  if (std::sscanf(after_key(header, "shape").c_str(), "(%ld , %ld %c", &rows, &cols, &close) != 3 ||
      (close != ')' && close != ','))
    fail(Status::invalid_argument, "'", path, "': expected a 2-D shape (n, k), header: ", header);
  if (rows < 1 || cols < 1 || rows > (1L << 30) || cols > (1L << 30) || rows * cols >= (1L << 31))
    fail(Status::invalid_argument, "'", path, "': shape (", rows, ", ", cols, ") out of range");
  // The data must be there before it is allocated: a header alone may claim gigabytes.
  const std::streamoff data_at = f.tellg();
  f.seekg(0, std::ios::end);
  const std::streamoff data_bytes = f.tellg() - data_at;
  if (data_bytes < std::streamoff(rows * cols * 4))
    fail(Status::invalid_argument, "'", path, "': truncated data (expected ", rows * cols, " floats, found ",
         data_bytes, " bytes)");
  f.seekg(data_at);
  NpyMatrix out;
  out.rows = int(rows);
  out.cols = int(cols);
  out.data.resize(size_t(rows) * size_t(cols));
  if (!f.read(reinterpret_cast<char*>(out.data.data()), std::streamsize(out.data.size() * 4)))
    fail(Status::invalid_argument, "'", path, "': truncated data (expected ", rows * cols, " floats)");
  return out;
}

}  // namespace lowbit::cli

#include "npy.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <regex>

#include "util/error.h"

namespace lowbit::cli {

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
  std::smatch m;
  if (!std::regex_search(header, m, std::regex("'descr':\\s*'([^']*)'")) || m[1] != "<f4")
    fail(Status::invalid_argument, "'", path, "': expected little-endian float32 ('<f4'), header: ", header);
  if (!std::regex_search(header, std::regex("'fortran_order':\\s*False")))
    fail(Status::invalid_argument, "'", path, "': expected C order (fortran_order False)");
  if (!std::regex_search(header, m, std::regex("'shape':\\s*\\(\\s*(\\d+)\\s*,\\s*(\\d+)\\s*,?\\s*\\)")))
    fail(Status::invalid_argument, "'", path, "': expected a 2-D shape (n, k), header: ", header);
  const long rows = std::stol(m[1]), cols = std::stol(m[2]);
  if (rows < 1 || cols < 1 || rows > (1L << 30) || cols > (1L << 30) || rows * cols >= (1L << 31))
    fail(Status::invalid_argument, "'", path, "': shape (", rows, ", ", cols, ") out of range");
  NpyMatrix out;
  out.rows = int(rows);
  out.cols = int(cols);
  out.data.resize(size_t(rows) * size_t(cols));
  if (!f.read(reinterpret_cast<char*>(out.data.data()), std::streamsize(out.data.size() * 4)))
    fail(Status::invalid_argument, "'", path, "': truncated data (expected ", rows * cols, " floats)");
  return out;
}

void write_npy_f32(const std::string& path, const NpyMatrix& mat) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" +
                       std::to_string(mat.rows) + ", " + std::to_string(mat.cols) + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  if (!f) fail(Status::io_error, "cannot create '", path, "'");
  const uint16_t len = uint16_t(header.size());
  f.write("\x93NUMPY\x01\x00", 8);
  f.put(char(len & 0xFF));
  f.put(char(len >> 8));
  f << header;
  f.write(reinterpret_cast<const char*>(mat.data.data()), std::streamsize(mat.data.size() * 4));
  if (!f) fail(Status::io_error, "cannot write '", path, "'");
}

}  // namespace lowbit::cli

// The .npy reader of `lowbit pack --in` (tools/npy.cpp): a bad file is an Error naming it.
#include "fuzz_util.h"
#include "lowbit/lowbit.hpp"
#include "npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const lowbit::fuzz::MemFile file(data, size);
  try {
    const lowbit::cli::NpyMatrix m = lowbit::cli::read_npy_f32(file.path());
    if (m.rows < 1 || m.cols < 1 || m.data.size() != size_t(m.rows) * size_t(m.cols)) std::abort();
  } catch (const lowbit::Error&) {
  }
  return 0;
}

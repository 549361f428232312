// A 64-byte aligned, zero-initialised byte buffer (packed weights, packed activations).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "util/error.h"

namespace lowbit {

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

class AlignedBuffer {
 public:
  static constexpr size_t kAlign = 64;
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t size) { resize(size); }
  void resize(size_t size) {
    if (size <= capacity_) { size_ = size; return; }
    size_t rounded = (size + kAlign - 1) / kAlign * kAlign;
    void* p = std::aligned_alloc(kAlign, rounded == 0 ? kAlign : rounded);
    if (p == nullptr) fail(Status::out_of_memory, "cannot allocate ", size, " bytes");
    std::memset(p, 0, rounded);
    data_.reset(static_cast<uint8_t*>(p));
    size_ = size;
    capacity_ = rounded;
  }
  uint8_t* data() { return data_.get(); }
  const uint8_t* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  std::unique_ptr<uint8_t, FreeDeleter> data_;
  size_t size_ = 0, capacity_ = 0;
};

}  // namespace lowbit

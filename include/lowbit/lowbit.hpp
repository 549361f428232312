// lowbit C++ API: RAII packed weights, exceptions carrying a status, the quantization helper.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace lowbit {

enum class Status : int {
  ok = 0,
  invalid_argument,
  unsupported,
  corrupt_data,
  io_error,
  out_of_memory,
  internal
};
const char* status_name(Status s);

// Every public entry point throws lowbit::Error (never asserts) for bad input or data.
class Error : public std::runtime_error {
 public:
  Error(Status status, const std::string& message) : std::runtime_error(message), status_(status) {}
  Status status() const { return status_; }

 private:
  Status status_;
};

enum class ScaleFormat : uint8_t { f32 = 0, bf16 = 1 };

// Groupwise-quantized weights, unpacked: qvals [n,k], scales / zeros [n, k/group_size].
struct QuantizedWeights {
  int n = 0, k = 0, bits = 0, group_size = 0;
  std::vector<int8_t> qvals;
  std::vector<float> scales;
  std::vector<int8_t> zeros;  // empty for symmetric quantization
};

// Quantizes f32 weights [n,k] per group of `group_size` along k. Symmetric: zero 0 and
// scale = max|w| / (2^(bits-1)-1) (bits=1: max|w|); asymmetric: scale = (max-min)/(2^bits-1) and
// an int8 zero point. ScaleFormat::bf16 rounds scales to bf16 values (stored as f32), which lets
// packing store them in half the bytes, losslessly.
QuantizedWeights quantize_weights(const float* w, int n, int k, int bits, int group_size,
                                  bool asymmetric, ScaleFormat scales = ScaleFormat::f32);

// Dequantized weights [n,k] as f32: scale * (q - zero).
std::vector<float> dequantize_weights(const QuantizedWeights& q);

struct LinearOptions {
  bool has_clamp = false;
  float clamp_min = 0.0f, clamp_max = 0.0f;
  int num_threads = 0;  // <= 0: all cores
};

// What a packed buffer's header says.
struct PackedInfo {
  std::string layout;  // layout family name, e.g. "portable_n1k1"
  int layout_id = 0;
  int n = 0, k = 0, bits = 0, group_size = 0;
  bool has_zeros = false, has_bias = false;
  int nr = 0, kr = 0, sr = 0;
  ScaleFormat scale_format = ScaleFormat::f32;
  std::string isa;  // ISA features the layout was packed for ("none" for portable)
  uint64_t payload_bytes = 0;
  uint64_t total_bytes = 0;
};

class PackedWeights {
 public:
  struct Impl;

  // target: "" = this CPU, or "portable", "x86-avx2", "x86-avxvnni", "x86-avx512vnni",
  // "aarch64-neon", "aarch64-dotprod", "aarch64-i8mm".
  static PackedWeights pack(int n, int k, int bits, int group_size, const int8_t* qvals,
                            const float* scales, const int8_t* zeros, const float* bias,
                            std::string_view target = {});
  static PackedWeights pack(const QuantizedWeights& q, const float* bias = nullptr,
                            std::string_view target = {});
  static PackedWeights load(const std::string& path);
  static PackedWeights from_buffer(const void* data, size_t size);
  // Validates like from_buffer but reads the caller's memory in place, without a copy: `data`
  // must be 64-byte aligned and stay alive and unchanged while the result (or a copy) is used.
  // Calls do not wait for a thread still late when they return (it never writes y); destroying
  // the last copy does, so `data` may be freed right after.
  // Weights saved by an older format version are arranged anew, so their view is a copy.
  // load, from_buffer and view read every format version; save writes the current one.
  static PackedWeights view(const void* data, size_t size);

  void save(const std::string& path) const;
  // Header followed by payload: exactly the bytes save() writes.
  const uint8_t* data() const;
  size_t size() const;
  PackedInfo info() const;

  // The same weights in the layout `target` uses; results are bit-identical.
  PackedWeights repack(std::string_view target = {}) const;

  // y[m,n] = op(x[m,k]). Throws Error(unsupported) when no kernel of this CPU reads the layout.
  void linear(int m, const float* x, float* y, const LinearOptions& options = {}) const;

  const Impl& impl() const { return *impl_; }
  explicit PackedWeights(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

 private:
  std::shared_ptr<const Impl> impl_;
};

// Makes the tuning record at `path` (written by `lowbit tune`, docs/tuning.md) the one the
// planner uses from now on; plans made before are not reused. Throws Error(io_error) when the
// file cannot be read, Error(corrupt_data) when it is not a valid record (truncated, corrupt,
// absurd values), Error(unsupported) when it is for another CPU or lowbit version; then the
// tuning in use stays. An empty path goes back to the automatic lookup (LOWBIT_TUNING, the
// user's cache directory, the built-in records, generic numbers). Results never depend on it.
void load_tuning(const std::string& path);

}  // namespace lowbit

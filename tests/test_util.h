// Shared test helpers: random problems, unaligned buffers, bit comparison, temporary files.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "format/problem.h"
#include "ops/quantize_activations.h"
#include "ops/reference.h"
#include "registry/registry.h"

namespace lowbit::test {

struct Weights {
  WeightProblem p;
  std::vector<int8_t> q, zeros;
  std::vector<float> scales, bias;
  const int8_t* zeros_ptr() const { return p.has_zeros ? zeros.data() : nullptr; }
  const float* bias_ptr() const { return p.has_bias ? bias.data() : nullptr; }
};

// Random weights over the whole bit range; scales optionally bf16-exact.
inline Weights random_weights(const WeightProblem& p, uint32_t seed, bool bf16_scales = false) {
  std::mt19937 rng(seed);
  Weights w;
  w.p = p;
  const int lo = -(1 << (p.bits - 1)), hi = (1 << (p.bits - 1)) - 1;
  std::uniform_int_distribution<int> qd(lo, hi), zd(-128, 127);
  std::uniform_real_distribution<float> sd(0.001f, 0.1f), bd(-1.0f, 1.0f);
  w.q.resize(size_t(p.n) * p.k);
  for (auto& v : w.q) v = int8_t(qd(rng));
  w.scales.resize(size_t(p.n) * p.groups());
  for (auto& s : w.scales) {
    s = sd(rng);
    if (bf16_scales) {
      uint32_t u;
      std::memcpy(&u, &s, 4);
      u &= 0xFFFF0000u;
      std::memcpy(&s, &u, 4);
    }
  }
  if (p.has_zeros) {
    w.zeros.resize(w.scales.size());
    for (auto& z : w.zeros) z = int8_t(zd(rng));
  }
  if (p.has_bias) {
    w.bias.resize(size_t(p.n));
    for (auto& b : w.bias) b = bd(rng);
  }
  return w;
}

// Activations at a deliberately unaligned address (offset floats past a 64-byte boundary).
struct Activations {
  std::vector<float> storage;
  float* x;
};
inline Activations random_activations(int m, int k, uint32_t seed, int offset = 1) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  Activations a;
  a.storage.resize(size_t(m) * k + 32);
  a.x = a.storage.data() + offset;
  for (size_t i = 0; i < size_t(m) * k; ++i) a.x[i] = d(rng);
  return a;
}

inline std::vector<float> reference(const Weights& w, int m, const float* x, ClampRange c = {}) {
  std::vector<float> y(size_t(m) * w.p.n);
  reference_linear(w.p, w.q.data(), w.scales.data(), w.zeros_ptr(), w.bias_ptr(), m, x, y.data(), c);
  return y;
}

// `quantize` against quantize_row_scalar, bit for bit, on rows that reach every branch of a
// vectorised quantizer: vector bodies and scalar tails, unaligned rows, NaN and ±Inf anywhere,
// exact ties of x / s, tiny (denormal) and huge ranges, one-signed, zero and constant rows;
// and not a byte written past k.
inline void expect_quantizer_matches_scalar(RowQuantizeFn quantize) {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal;
  std::uniform_int_distribution<int> step(0, 254);
  const auto expect_same = [&](const std::vector<float>& row, const char* what) {
    const size_t k = row.size();
    std::vector<float> x(k + 1);
    std::vector<int8_t> want(k), got(k + 2, 99);
    for (size_t off : {0, 1}) {  // off = 1: the row and the output one element past alignment
      std::copy(row.begin(), row.end(), x.begin() + off);
      const RowQuant rw = quantize_row_scalar(row.data(), k, want.data());
      const RowQuant rg = quantize(x.data() + off, k, got.data() + off);
      ASSERT_EQ(std::memcmp(&rw.scale, &rg.scale, 4), 0) << what << " k=" << k << ": " << rw.scale << " vs " << rg.scale;
      ASSERT_EQ(rw.zero, rg.zero) << what << " k=" << k;
      ASSERT_EQ(std::memcmp(want.data(), got.data() + off, k), 0) << what << " k=" << k << " off=" << off;
      ASSERT_EQ(got[k + off], 99) << what << " k=" << k << ": wrote past the row";
      got.assign(k + 2, 99);
    }
  };
  for (size_t k : {1, 15, 16, 17, 31, 32, 33, 47, 48, 100, 4096, 4099}) {
    std::vector<float> row(k);
    for (float mag : {1.0f, 1e-30f, 1e30f, 1e-40f /* denormal */, 3e38f}) {
      for (float& v : row) v = normal(rng) * mag;
      expect_same(row, "random");
      for (float& v : row) v = std::fabs(v);
      expect_same(row, "positive");
      for (float& v : row) v = -v;
      expect_same(row, "negative");
    }
    std::fill(row.begin(), row.end(), 0.0f);
    expect_same(row, "zeros");
    std::fill(row.begin(), row.end(), 3.5f);
    expect_same(row, "constant");
    // Range [0, 255]: s = 1, and every other value is an exact tie j + 0.5.
    for (float& v : row) v = float(step(rng)) + 0.5f;
    row[0] = 0.0f;
    if (k > 1) row[k - 1] = 255.0f;
    expect_same(row, "ties");
    for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                      -std::numeric_limits<float>::infinity()})
      for (size_t pos : {size_t(0), k / 2, k - 1}) {
        for (float& v : row) v = normal(rng);
        row[pos] = bad;
        expect_same(row, "non-finite");
      }
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// The weight width a case of `bits` runs at on `kd`: bits, or, for a kernel with fewer widths
// (the table-lookup ones), the widest it has below, else its narrowest: a case never skips a
// kernel for its width.
inline int width_for(const KernelDesc& kd, int bits) {
  for (int b = bits; b >= 1; --b)
    if (kd.bits_mask >> b & 1) return b;
  for (int b = bits + 1; b <= 8; ++b)
    if (kd.bits_mask >> b & 1) return b;
  return bits;
}

inline bool bits_equal(const float* a, const float* b, size_t n) {
  return std::memcmp(a, b, n * sizeof(float)) == 0;
}

// Index of the first differing float, for messages.
inline std::string first_difference(const float* a, const float* b, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (std::memcmp(&a[i], &b[i], 4) != 0)
      return "index " + std::to_string(i) + ": " + std::to_string(a[i]) + " vs " + std::to_string(b[i]);
  return "none";
}

inline bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A fresh directory of its own (mkdtemp under the test temporary directory), removed with
// everything in it when the object goes: a suite run leaves nothing behind in /tmp.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix) {
    std::string tmpl = ::testing::TempDir() + prefix + "_XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed: " + tmpl);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace lowbit::test

// Hardware ceilings for the benchmarks: streaming reads and dot-product peaks, per ISA.
// Each is defined in a TU built with that ISA's flags: call only when the CPU has it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lowbit::bench {

// Reads `bytes` (a multiple of 4 KiB) and returns a checksum. Loop shapes:
//   0: one accumulator   1: four streams a quarter apart, one accumulator
//   2: two accumulators  3: eight independent accumulators
constexpr int kStreamShapes = 4;
uint64_t stream_avx2(const uint8_t* p, size_t bytes, int shape);
uint64_t stream_avx512(const uint8_t* p, size_t bytes, int shape);

// `iters` iterations of independent dot-product instructions; returns a checksum.
// Multiply-accumulates per iteration: the matching k*Macs constant.
constexpr int64_t kAvx2MacsPerIter = 12 * 32;     // vpmaddubsw, 256-bit
constexpr int64_t kAvxVnniMacsPerIter = 12 * 32;  // vpdpbusd, 256-bit
constexpr int64_t kAvx512MacsPerIter = 12 * 64;   // vpdpbusd, 512-bit
uint64_t dot_peak_avx2(int64_t iters);
uint64_t dot_peak_avxvnni(int64_t iters);
uint64_t dot_peak_avx512vnni(int64_t iters);

// `steps` group steps of the AVX2 `_sums` GEMV's vector operations without its loads, as
// independent chains: the time that layout's arithmetic takes on this core (1024 MACs per
// step), the compute floor of AVX2 cached decode. Returns a checksum.
constexpr int64_t kSumsGemvMixMacsPerStep = 1024;
uint64_t sums_gemv_mix_avx2(int64_t steps);

}  // namespace lowbit::bench

// What the x86 micro-kernels share (gemv.h, gemm.h): written once over a vector-traits struct
// (avx2/traits.h, avxvnni/traits.h, avx512vnni/traits.h) and instantiated in each ISA's own
// translation unit.
//
// Exact arithmetic (DESIGN §1). With u = qw + o (o = 2^(bits-1)) the unsigned stream value,
// cz = o + zw, and per row and column of a sum block of b k values (format/layout.h):
//   d = Σ(qx - zx)(u - cz) = Σ u·qx - zx·Su - cz·Ex,   Su = Σ u,  Ex = Σ qx - b·zx
// Σ u·qx is an unsigned-by-signed byte dot product (vpdpbusd, or vpmaddubsw with int16
// partial sums kept exact). The rest is a 16-bit pair product: the layout's column-sum lane
// (Su, cz) times the LHS pair (-zx, -Ex) (GEMM); a GEMV, which does not read the column sums,
// adds -zx·Su from byte sums of the weights it streams and (0, cz)·(-zx, -Ex). Everything is
// exact modulo 2^32 and d fits in int32, so d is exact.
//
// Everything here has internal linkage: each ISA TU gets its own copy, so the linker can never
// hand an AVX-512 body to an AVX2 caller. Nothing from the standard library is instantiated.
#pragma once

#include <emmintrin.h>
#include <xmmintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "registry/kernel.h"

#define LOWBIT_X86_INLINE inline __attribute__((always_inline))
// Lambdas are inlined before scalar replacement, so register arrays indexed in them
// (accumulators, unpacked weights) stay in registers instead of going through the stack.
#define LOWBIT_X86_LAMBDA __attribute__((always_inline))

namespace lowbit {
namespace x86 {
namespace {

constexpr int kKr = 4;  // k values per 32-bit lane, every x86 layout

// v as a register the compiler knows nothing about, so the load that made it is not folded
// into each use (one load per use): the traits' load_packed, on native vector types only (the
// SIMDe-emulated build's are structs).
template <class V>
LOWBIT_X86_INLINE V opaque_register(V v) {
  __asm__("" : "+v"(v));
  return v;
}

constexpr int min_i(int a, int b) { return a < b ? a : b; }
constexpr int max_i(int a, int b) { return a > b ? a : b; }
constexpr int pow2_floor(int a) { return a < 2 ? 1 : 2 * pow2_floor(a / 2); }

// static_for<N>(f): f(integral_constant<int, 0>) ... f(integral_constant<int, N-1>): register
// arrays indexed by compile-time constants, shift counts as immediates.
template <class F, int... I>
LOWBIT_X86_INLINE void static_for_impl(F&& f, std::integer_sequence<int, I...>) {
  (f(std::integral_constant<int, I>{}), ...);
}
template <int N, class F>
LOWBIT_X86_INLINE void static_for(F&& f) {
  static_for_impl(f, std::make_integer_sequence<int, N>{});
}

// How the stream values of a k-block reach a register: the record's bit planes (format/
// layout.h), unpacked in registers. One step reads kPerLoad k-blocks: one vector of the
// narrowest plane (8/w k-blocks of w-bit fields), loads(i) vectors of plane i. The value of
// k-block s is Σ_i field_i << shift(i), each field one 16-bit shift and an and (fields never
// cross a byte: plane chunks are whole vectors, format/layout.h).
template <int BITS>
struct Planes {
  static constexpr int kUmax = (1 << BITS) - 1;  // largest value (bounds the exact sums)
  static constexpr int kCount = plane_count(BITS);
  static constexpr bool kBuffered = false;
  static constexpr int width(int i) { return plane_width(BITS, i); }
  static constexpr int shift(int i) { return plane_shift(BITS, i); }
  static constexpr int kPerLoad = 8 / plane_width(BITS, plane_count(BITS) - 1);
  static constexpr int loads(int i) { return kPerLoad * width(i) / 8; }
  static constexpr int first_load(int i) { return i == 0 ? 0 : first_load(i - 1) + loads(i - 1); }
  static constexpr int kLoads = first_load(kCount);
};

// Groups of 16 mod 32 (where a 1-bit plane is not whole vectors: format/layout.h) are
// unpacked into an L1 buffer of u bytes first and read as one 8-bit "plane"; UMAX bounds the
// values.
template <int UMAX>
struct Unpacked {
  static constexpr int kUmax = UMAX;
  static constexpr int kCount = 1;
  static constexpr bool kBuffered = true;
  static constexpr int width(int) { return 8; }
  static constexpr int shift(int) { return 0; }
  static constexpr int kPerLoad = 1;
  static constexpr int loads(int) { return 1; }
  static constexpr int first_load(int) { return 0; }
  static constexpr int kLoads = 1;
};

// Calls f(S{}) with the stream format of g's bit width: its planes in registers where every
// sum block is whole 32-k blocks (then every plane chunk is whole vectors: format/layout.h),
// else (groups of 16 mod 32) through the unpack buffer, with a bound on u for the sums.
template <class F>
LOWBIT_X86_INLINE void with_src(const PackedGeometry& g, F&& f) {
  if (g.sum_block % 32 != 0) {
    if (g.bits <= 3) return f(Unpacked<7>{});
    return g.bits == 8 ? f(Unpacked<255>{}) : f(Unpacked<127>{});
  }
  switch (g.bits) {
    case 1: return f(Planes<1>{});
    case 2: return f(Planes<2>{});
    case 3: return f(Planes<3>{});
    case 4: return f(Planes<4>{});
    case 5: return f(Planes<5>{});
    case 6: return f(Planes<6>{});
    case 7: return f(Planes<7>{});
    default: return f(Planes<8>{});
  }
}

// Calls f(GS, SF) with compile-time constants for the group step. GS > 0: the group size
// (one sum block per group; its addressing is all constant: measured 0.22 against 0.33
// instructions per MAC at 1 bit with the same 32-k code under a group loop read at run time);
// GS < 0: the sum block is read at run time and is a multiple of -GS k; GS = 0: read at run
// time (the unpack buffer). SF: the scale format (1 f32, 2 bf16; 0 read at run time: a
// predictable branch per group). 4 bits gets both at its common group sizes, the other widths
// GS at groups 32 and 128 (chunk_kblocks: compile time).
template <class S, class F>
LOWBIT_X86_INLINE void with_group(const PackedGeometry& g, F&& f) {
  auto scales = [&](auto gs) LOWBIT_X86_LAMBDA {
    if (g.scale_format == ScaleFormat::bf16) f(gs, std::integral_constant<int, 2>{});
    else f(gs, std::integral_constant<int, 1>{});
  };
  if (S::kBuffered) return f(std::integral_constant<int, 0>{}, std::integral_constant<int, 0>{});
  if (std::is_same<S, Planes<4>>::value) {
    switch (g.group_size) {
      case 32: return scales(std::integral_constant<int, 32>{});
      case 64: return scales(std::integral_constant<int, 64>{});
      case 128: return scales(std::integral_constant<int, 128>{});
      default: break;
    }
  } else {
    switch (g.group_size) {
      case 32: return f(std::integral_constant<int, 32>{}, std::integral_constant<int, 0>{});
      case 128: return f(std::integral_constant<int, 128>{}, std::integral_constant<int, 0>{});
      default: break;
    }
  }
  f(std::integral_constant<int, -32>{}, std::integral_constant<int, 0>{});
}

// k-blocks of one block_dot chunk for with_group's GS (0: run time): 4 bits a whole group,
// the other widths 32 k (straight-line code of that size is as fast, and compiles in a
// fraction of the time of a 128-k group).
template <class S>
constexpr int chunk_kblocks(int gs) {
  return gs == 0 ? 0 : std::is_same<S, Planes<4>>::value && gs > 0 ? gs / kKr : 32 / kKr;
}

// The scales of one record (SF as with_group gives it).
template <class T, int SF>
LOWBIT_X86_INLINE typename T::F record_scales(const PackedGeometry& g, const uint8_t* rec) {
  const bool bf16 = SF == 0 ? g.scale_format == ScaleFormat::bf16 : SF == 2;
  return T::load_scales(rec + g.scales_offset, bf16);
}

// Buffered bit widths: unpacks `bytes` stream values starting at stream byte `start` of one
// record into `out` (u, one per byte), 16 bytes at a time with SSE2 shifts. `bytes` covers
// whole chunks of every plane (a sum block always does).
inline void unpack_segment(const PackedGeometry& g, const uint8_t* rec, size_t start, size_t bytes,
                           uint8_t* out) {
  for (int i = 0; i < g.num_planes; ++i) {
    const Plane& pl = g.planes[i];
    const int w = pl.width, per_byte = 8 / w, chunk = pl.chunk;
    const uint8_t* in = rec + pl.offset + start * size_t(w) / 8;
    const size_t in_bytes = bytes * size_t(w) / 8;
    const __m128i mask = _mm_set1_epi8(char((1 << w) - 1));
    const __m128i up = _mm_cvtsi32_si128(pl.shift);
    for (size_t c = 0; c < in_bytes; c += size_t(chunk)) {
      uint8_t* dst = out + c * size_t(per_byte);
      for (int j = 0; j < chunk; j += 16) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + c + size_t(j)));
        for (int s = 0; s < per_byte; ++s) {
          // 16-bit shifts: the masked bits never cross a byte (s*w + w <= 8, shift + w <= 8).
          __m128i val = _mm_and_si128(_mm_srl_epi16(v, _mm_cvtsi32_si128(s * w)), mask);
          val = _mm_sll_epi16(val, up);
          __m128i* d = reinterpret_cast<__m128i*>(dst + size_t(s) * chunk + size_t(j));
          _mm_store_si128(d, i == 0 ? val : _mm_or_si128(_mm_load_si128(d), val));
        }
      }
    }
  }
}

// The parts of one MR-row LHS block (format/lhs_layout.h).
struct Lhs {
  const float* sx;
  const int32_t* zx;
  const int32_t* pairs;  // [k / sum_block][MR]
  const int8_t* q;       // [k / kKr][MR][kKr]
};
template <int MR>
inline Lhs lhs_view(const GemmShape& shape, const UKernelArgs& a) {
  const LhsBlockLayout l = lhs_block_layout(LhsFormat{MR, kKr}, size_t(shape.k), size_t(shape.geo->groups));
  return {lhs_scales(a.lhs), lhs_zeros(a.lhs, l), lhs_pairs(a.lhs, l), lhs_q(a.lhs, l)};
}

// Where a kernel reads the stream of sum block `s` of one record: each plane's first vector
// of the block (formats in registers), or `buf`, after unpacking into it (S::kBuffered).
template <class T, class S>
LOWBIT_X86_INLINE void block_planes(const PackedGeometry& g, const uint8_t* rec, int s, uint8_t* buf,
                                    const uint8_t* (&out)[S::kCount]) {
  const size_t start = size_t(s) * size_t(T::kNr) * size_t(g.sum_block);
  if (S::kBuffered) {
    unpack_segment(g, rec, start, size_t(T::kNr) * size_t(g.sum_block), buf);
    out[0] = buf;
    return;
  }
  static_for<S::kCount>([&](auto i) LOWBIT_X86_LAMBDA {
    out[i] = rec + g.planes[i].offset + start * size_t(S::width(i)) / 8;
  });
}

// The bit matrix of vgf2p8affineqb (T::affine) that moves field t of a byte's w-bit fields to
// bits [sh, sh + w) and clears the others: output bit j is input bit t·w + j - sh (the
// instruction takes output bit j's row from the matrix's byte 7 - j).
constexpr uint64_t field_matrix(int w, int t, int sh) {
  uint64_t a = 0;
  for (int j = sh; j < sh + w; ++j) a |= uint64_t{1} << (t * w + j - sh) << (8 * (7 - j));
  return a;
}

// The u value of k-block s of a step from the step's loads `raw` (S's planes, S::first_load):
// per plane one affine transform (T::kAffineUnpack), or a shift and an and, merged with or.
template <class T, class S, int K>
LOWBIT_X86_INLINE typename T::V unpack_kblock(const typename T::V* raw) {
  using V = typename T::V;
  if constexpr (T::kAffineUnpack && S::width(0) != 8) {
    V f[S::kCount];
    static_for<S::kCount>([&](auto i) LOWBIT_X86_LAMBDA {
      constexpr int w = S::width(i), per = 8 / w;
      f[i] = T::template affine<field_matrix(w, K % per, S::shift(i))>(raw[S::first_load(i) + K / per]);
    });
    if constexpr (S::kCount == 1) return f[0];
    else if constexpr (S::kCount == 2) return T::or_(f[0], f[1]);
    else return T::or3(f[0], f[1], f[2]);
  }
  V u = raw[0];
  static_for<S::kCount>([&](auto i) LOWBIT_X86_LAMBDA {
    constexpr int w = S::width(i), per = 8 / w, t = K % per, d = t * w - S::shift(i);
    if constexpr (w != 8) {
      V x = raw[S::first_load(i) + K / per];
      if constexpr (d > 0) x = T::template srli16<d>(x);
      if constexpr (d < 0) x = T::template slli16<-d>(x);
      const V m = T::set1_8(char(((1 << w) - 1) << S::shift(i)));
      u = i == 0 ? T::and_(x, m) : T::and_or(x, m, u);
    }
  });
  return u;
}

// Σ u·qx over `nkb` k-blocks into acc[r][p], ROWS rows of an MR-row LHS block and NP column
// panels: src[p][i] is panel p's first vector of plane i (format S), qx the LHS of the first
// k-block. NKB > 0: nkb is a multiple of NKB, each NKB k-blocks straight-line code. With PF > 0 each
// 64-byte line of every plane is prefetched PF bytes ahead; with PF = kRuntimePrefetch, *pf
// bytes ahead (read at every prefetch, below). SUM (one row): also adds -zx·Su,
// from column sums of the unpacked vectors flushed by pair products with nzx (-zx in every
// int16 lane): uint8 sums, flushed before 255/umax vectors; at 8 bits (a flush every k-block)
// int16 pair sums (one vpmaddubsw with ones more per vector), flushed once per call; at 1 bit
// with T::kPopcountSums, each load's 32-bit lane popcounts (a lane of a 1-bit load holds its
// column's 32 k), added in int32 lanes and flushed once per call like the int16 pair sums
// (each lane < 2^15, so as a pair its high half is zero). CHAINS > 1
// splits each accumulator's dots into that many independent
// chains (by k-block within a step), added up at the end: for kernels whose few accumulators
// would otherwise wait on the dot latency (T::add32 then needed).
constexpr int kRuntimePrefetch = -1;
template <class T, class S, int ROWS, int NP, int MR, bool SUM, int NKB, int PF, int CHAINS = 1>
LOWBIT_X86_INLINE void block_dot(const uint8_t* const (&src)[NP][S::kCount], const int8_t* qx, int nkb_rt,
                                 typename T::V (&acc)[ROWS][NP], typename T::V nzx, const volatile uint32_t* pf = nullptr) {
  static_assert(!SUM || ROWS == 1, "column sums are folded for one row");
  using V = typename T::V;
  constexpr int kPer = S::kPerLoad;
  // Column sums in int16 pairs where uint8 ones would flush after every k-block (8 bits; at 7
  // bits, every second, the extra vpmaddubsw per vector is not repaid: llvm-mca, alderlake);
  // a call's k-blocks then add at most 2·255·kMaxSumBlock/kKr to a lane.
  constexpr bool kPop = SUM && T::kPopcountSums && S::kCount == 1 && S::width(0) == 1;
  constexpr bool kSum16 = SUM && !kPop && S::kUmax > 127;
  constexpr bool kWhole = kSum16 || kPop;  // column sums flushed once per call
  static_assert(2 * 255 * (kMaxSumBlock / kKr) <= 32767, "int16 column sums of one call stay exact");
  // k-blocks whose partial sums stay exact: T's int16 partials (AVX2), the uint8 column sums.
  constexpr int kRaw = SUM && !kWhole ? min_i(T::run_kbs(S::kUmax), 255 / S::kUmax) : T::run_kbs(S::kUmax);
  // A run is whole steps, or (7 and 6 bits) a power-of-two part of one step.
  constexpr int kRun = kRaw >= kPer ? kRaw / kPer * kPer : pow2_floor(kRaw);
  constexpr int kOuter = max_i(kRun, kPer);
  constexpr int kLinesEvery = 64 / T::kBytes;  // loads per cache line
  constexpr int kCh = min_i(CHAINS, kPer);
  typename T::Part part[kCh][ROWS][NP];
  V su[NP];  // column sums of u (SUM): uint8, int16 pairs (kSum16) or int32 (kPop)
  if constexpr (kWhole) static_for<NP>([&](auto p) LOWBIT_X86_LAMBDA { su[p] = T::zero(); });
  auto begin_run = [&]() LOWBIT_X86_LAMBDA {
    static_for<NP>([&](auto p) LOWBIT_X86_LAMBDA {
      if constexpr (!kWhole) su[p] = T::zero();
      static_for<ROWS>([&](auto r) LOWBIT_X86_LAMBDA {
        static_for<kCh>([&](auto c) LOWBIT_X86_LAMBDA { part[c][r][p] = T::part_begin(c == 0 ? acc[r][p] : T::zero()); });
      });
    });
  };
  auto end_run = [&]() LOWBIT_X86_LAMBDA {
    static_for<NP>([&](auto p) LOWBIT_X86_LAMBDA {
      static_for<ROWS>([&](auto r) LOWBIT_X86_LAMBDA {
        acc[r][p] = T::template part_end<S::kUmax>(acc[r][p], part[0][r][p]);
        if constexpr (kCh > 1)
          static_for<kCh - 1>([&](auto c) LOWBIT_X86_LAMBDA {
            acc[r][p] = T::add32(acc[r][p], T::template part_end<S::kUmax>(T::zero(), part[c + 1][r][p]));
          });
      });
      if constexpr (SUM && !kWhole) acc[0][p] = T::pair_dot(acc[0][p], T::sum_pairs(su[p]), nzx);
    });
  };
  auto run = [&](int kb0, int kb) LOWBIT_X86_LAMBDA {
    const int step = (kb0 + kb) / kPer;
    V raw[NP][S::kLoads];
    static_for<kPer>([&](auto s) LOWBIT_X86_LAMBDA {
      // Each vector is loaded where its first k-block needs it: a register holds it only
      // while its k-blocks are unpacked (7 bits: 7 vectors per panel and step).
      static_for<NP>([&](auto p) LOWBIT_X86_LAMBDA {
        static_for<S::kCount>([&](auto i) LOWBIT_X86_LAMBDA {
          constexpr int per = 8 / S::width(i);
          if constexpr (s % per == 0) {
            const int load = step * S::loads(i) + s / per;
            const uint8_t* at = src[p][i] + size_t(load) * T::kBytes;
            V& v = raw[p][S::first_load(i) + s / per];
            v = S::width(i) == 8 ? T::load(at) : T::load_packed(at);
            if constexpr (kPop) su[p] = T::add32(su[p], T::popcount32(v));
            if (PF != 0 && load % kLinesEvery == 0) {
              // A run-time distance is read where it is used, from the caller's stack: held
              // in a register across the loop, it cost the 3- and 7-bit GEMVs (12 stream
              // pointers in 15 registers) 15-19 % from DRAM (docs/x86-kernels.md, "Decode
              // from DRAM").
              const size_t d = PF > 0 ? size_t(PF) : *pf;
              _mm_prefetch(reinterpret_cast<const char*>(at + d), _MM_HINT_T0);
            }
          }
        });
      });
      typename T::W w[NP];
      static_for<NP>([&](auto p) LOWBIT_X86_LAMBDA {
        const V u = unpack_kblock<T, S, s>(raw[p]);
        if constexpr (kSum16) su[p] = T::add16(su[p], T::sum_pairs(u));
        else if constexpr (SUM && !kPop) su[p] = T::add8(su[p], u);
        w[p] = T::template prep<S::kUmax>(u);
      });
      const int8_t* x = qx + size_t(kb0 + kb + s) * MR * kKr;
      static_for<ROWS>([&](auto r) LOWBIT_X86_LAMBDA {
        if constexpr (NP == 1) {  // broadcast inside the instruction where the ISA can
          part[s % kCh][r][0] = T::template dot_x<S::kUmax>(part[s % kCh][r][0], w[0], x + r * kKr);
        } else {  // one broadcast for every panel
          const V xr = T::bcast32(x + r * kKr);
          static_for<NP>([&](auto p) LOWBIT_X86_LAMBDA { part[s % kCh][r][p] = T::template dot<S::kUmax>(part[s % kCh][r][p], w[p], xr); });
        }
      });
      if constexpr (kRun < kPer && (s + 1) % kRun == 0 && s + 1 < kPer) {
        end_run();
        begin_run();
      }
    });
  };
  if constexpr (NKB > 0) {  // runs cut at chunk ends: straight-line code per chunk
    constexpr int kOuterC = max_i(min_i(kRun, NKB), kPer);
#pragma GCC unroll 1
    for (int c0 = 0; c0 < nkb_rt; c0 += NKB)
      static_for<NKB / kOuterC>([&](auto o) LOWBIT_X86_LAMBDA {
        begin_run();
        static_for<kOuterC / kPer>([&](auto t) LOWBIT_X86_LAMBDA { run(c0 + o * kOuterC, t * kPer); });
        end_run();
      });
  } else {  // one step's code, looped
    for (int kb0 = 0; kb0 < nkb_rt; kb0 += kOuter) {
      const int n = min_i(kOuter, nkb_rt - kb0);
      begin_run();
#pragma GCC unroll 1
      for (int kb = 0; kb < n; kb += kPer) run(kb0, kb);
      end_run();
    }
  }
  if constexpr (kWhole) static_for<NP>([&](auto p) LOWBIT_X86_LAMBDA { acc[0][p] = T::pair_dot(acc[0][p], su[p], nzx); });
}

// The f32 sums of ROWS x NP accumulators across groups: in registers, or (MEM) in `buf`, an L1
// buffer of ROWS·NP vectors, where 16 vector registers cannot hold them next to the int32
// accumulators (AVX-VNNI, 4 rows x 2 panels: one fma with a memory operand and one store per
// group and accumulator).
template <class T, int ROWS, int NP, bool MEM>
struct FSums {
  typename T::F v[ROWS][NP];
  LOWBIT_X86_INLINE explicit FSums(float*) {
    static_for<ROWS>([&](auto r) LOWBIT_X86_LAMBDA { static_for<NP>([&](auto p) LOWBIT_X86_LAMBDA { v[r][p] = T::fzero(); }); });
  }
  LOWBIT_X86_INLINE void next_group() {}
  LOWBIT_X86_INLINE void add(int r, int p, typename T::F x, typename T::F sw) { v[r][p] = T::fmadd(x, sw, v[r][p]); }
  LOWBIT_X86_INLINE typename T::F get(int r, int p) const { return v[r][p]; }
};
template <class T, int ROWS, int NP>
struct FSums<T, ROWS, NP, true> {
  float* mem;
  LOWBIT_X86_INLINE explicit FSums(float* buf) : mem(buf) {
    for (int i = 0; i < ROWS * NP; ++i) T::fstore(mem + i * T::kNr, T::fzero());
  }
  // Once per group: the buffer's address becomes opaque, so the compiler cannot carry the
  // sums from one group to the next in (spilled) registers instead of the buffer.
  LOWBIT_X86_INLINE void next_group() { __asm__("" : "+r"(mem)); }
  LOWBIT_X86_INLINE void add(int r, int p, typename T::F x, typename T::F sw) {
    float* f = mem + (r * NP + p) * T::kNr;
    T::fstore(f, T::fmadd(x, sw, T::fload(f)));
  }
  LOWBIT_X86_INLINE typename T::F get(int r, int p) const { return T::fload(mem + (r * NP + p) * T::kNr); }
};

// y = fma(acc, s_x, bias), then max(lo, y), min(hi, y): NaN in y survives (second operand).
template <class T>
inline void store_row(const Lhs& lhs, const UKernelArgs& a, int p, int r, typename T::F acc) {
  const size_t col = size_t(p) * T::kNr;
  const int cols = int(a.n - col < size_t(T::kNr) ? a.n - col : size_t(T::kNr));
  const typename T::F bias = a.bias ? T::load_cols(a.bias + col, cols) : T::fzero();
  typename T::F y = T::fmadd(acc, T::fset1(lhs.sx[r]), bias);
  y = T::fmin(T::fset1(a.clamp_max), T::fmax(T::fset1(a.clamp_min), y));
  T::store_cols(a.y + size_t(r) * a.y_stride + col, y, cols);
}

// The panels of kNr columns that a.n columns take (the last one may be short).
template <class T>
LOWBIT_X86_INLINE int num_panels(const UKernelArgs& a) {
  return int((a.n + size_t(T::kNr) - 1) / size_t(T::kNr));
}

// Runs f(p, integral_constant<NP>) over the panels of a.n columns, NP at a time, then the
// remaining ones one by one.
template <int NP, class T, class F>
LOWBIT_X86_INLINE void for_panels(const UKernelArgs& a, F&& f) {
  const int np = num_panels<T>(a);
  int p = 0;
  for (; p + NP <= np; p += NP) f(p, std::integral_constant<int, NP>{});
  for (; p < np; ++p) f(p, std::integral_constant<int, 1>{});
}

}  // namespace
}  // namespace x86
}  // namespace lowbit

// The table of layout families. Ids are stable on disk: add new ones at the end, never reuse.
#pragma once

#include <cstddef>
#include <cstdint>

#include "format/layout.h"

namespace lowbit {

// The stable on-disk ids of the layout families, by their names.
namespace layout_id {
constexpr uint16_t portable_n1k1s1 = 1;
constexpr uint16_t x86_avx2_n8k4s32 = 2;     // no kernels any more: loads, repacks
constexpr uint16_t x86_avx512_n16k4s64 = 3;  // likewise
constexpr uint16_t x86_avx2_n8k4s32_sums = 4;
constexpr uint16_t x86_avx512_n16k4s64_sums = 5;
constexpr uint16_t x86_avx2_lut_n32k4s32 = 6;
constexpr uint16_t x86_avx512_lut_n64k4s64 = 7;
constexpr uint16_t arm_neon_n8k1s16 = 32;
constexpr uint16_t arm_dotprod_n8k4s16 = 33;
constexpr uint16_t arm_i8mm_n8k8s16 = 34;
}  // namespace layout_id

struct LayoutTable {
  const LayoutDesc* begin() const { return data; }
  const LayoutDesc* end() const { return data + size; }
  const LayoutDesc* data;
  size_t size;
};

LayoutTable all_layouts();
const LayoutDesc* find_layout(uint16_t id);        // nullptr when unknown
const LayoutDesc* find_layout(const char* name);   // nullptr when unknown
const LayoutDesc& portable_layout();

}  // namespace lowbit

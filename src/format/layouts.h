// The table of layout families. Ids are stable on disk: add new ones at the end, never reuse.
#pragma once

#include <cstddef>
#include <cstdint>

#include "format/layout.h"

namespace lowbit {

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

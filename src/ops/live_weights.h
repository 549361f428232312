// The packed weights alive in this process, counted once per buffer (a view of bytes that an
// owning PackedWeights also holds is the same buffer): the bytes a model's calls read in turn.
// When they exceed the last-level cache, no layer's weights are still cached when it is called
// again, whatever its own size, and the planner estimates every call's weights from DRAM
// (ops/linear.cpp, make_plan's working_set).
#pragma once

#include <cstddef>

#include "cpu/profile.h"

namespace lowbit {

void note_live_weights(const void* data, size_t bytes);  // when a PackedWeights is made
void forget_live_weights(const void* data);              // when it is destroyed
size_t live_weight_bytes();
// The working set a call plans with (make_plan): the live packed weights when they exceed the
// CPU's L3, else 0 (the weights alone). run_linear's, and the tools' that report or run its plan.
size_t planning_working_set(const CpuProfile& prof);

}  // namespace lowbit

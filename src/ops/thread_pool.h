// Process-wide pthreadpools, one per thread count, created on first use.
#pragma once

#include <pthreadpool.h>

namespace lowbit {

constexpr int kMaxThreads = 1024;

// nullptr for threads <= 1 (the caller runs inline).
pthreadpool_t pool_for_threads(int threads);

}  // namespace lowbit

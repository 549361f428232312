// The C API: a thin shell over the C++ API that turns exceptions into status codes and a
// thread-local message.
#include "lowbit/lowbit.h"

#include <new>
#include <string>

#include "lowbit/lowbit.hpp"
#include "util/error.h"

struct lowbit_packed_weights {
  lowbit::PackedWeights w;
};

namespace {

thread_local std::string g_last_error;

template <typename F>
lowbit_status guarded(F&& f) {
  try {
    f();
    g_last_error.clear();
    return LOWBIT_OK;
  } catch (const lowbit::Error& e) {
    g_last_error = e.what();
    return static_cast<lowbit_status>(e.status());
  } catch (const std::bad_alloc&) {
    g_last_error = "out of memory";
    return LOWBIT_OUT_OF_MEMORY;
  } catch (const std::invalid_argument& e) {  // e.g. a malformed LOWBIT_* variable
    g_last_error = e.what();
    return LOWBIT_INVALID_ARGUMENT;
  } catch (const std::exception& e) {
    g_last_error = std::string("internal error: ") + e.what();
    return LOWBIT_INTERNAL;
  } catch (...) {
    g_last_error = "internal error";
    return LOWBIT_INTERNAL;
  }
}

void require_out(void* out) {
  if (out == nullptr) lowbit::fail(lowbit::Status::invalid_argument, "out is NULL");
}

const lowbit::PackedWeights& weights(const lowbit_packed_weights* w) {
  if (w == nullptr) lowbit::fail(lowbit::Status::invalid_argument, "w is NULL");
  return w->w;
}

lowbit_packed_weights* box(lowbit::PackedWeights&& w) { return new lowbit_packed_weights{std::move(w)}; }

}  // namespace

extern "C" {

const char* lowbit_last_error(void) { return g_last_error.c_str(); }

lowbit_status lowbit_pack_weights(int n, int k, int bits, int group_size, const int8_t* qvals,
                                  const float* scales, const int8_t* zeros, const float* bias,
                                  const char* target, lowbit_packed_weights** out) {
  return guarded([&] {
    require_out(out);
    *out = nullptr;
    *out = box(lowbit::PackedWeights::pack(n, k, bits, group_size, qvals, scales, zeros, bias,
                                           target ? target : ""));
  });
}

lowbit_status lowbit_linear(const lowbit_packed_weights* w, int m, const float* x, float* y,
                            const lowbit_linear_options* opts) {
  return guarded([&] {
    lowbit::LinearOptions o;
    if (opts) {
      o.has_clamp = opts->has_clamp != 0;
      o.clamp_min = opts->clamp_min;
      o.clamp_max = opts->clamp_max;
      o.num_threads = opts->num_threads;
    }
    weights(w).linear(m, x, y, o);
  });
}

lowbit_status lowbit_save(const lowbit_packed_weights* w, const char* path) {
  return guarded([&] {
    if (path == nullptr) lowbit::fail(lowbit::Status::invalid_argument, "path is NULL");
    weights(w).save(path);
  });
}

lowbit_status lowbit_load(const char* path, lowbit_packed_weights** out) {
  return guarded([&] {
    require_out(out);
    *out = nullptr;
    if (path == nullptr) lowbit::fail(lowbit::Status::invalid_argument, "path is NULL");
    *out = box(lowbit::PackedWeights::load(path));
  });
}

lowbit_status lowbit_from_buffer(const void* data, size_t size, lowbit_packed_weights** out) {
  return guarded([&] {
    require_out(out);
    *out = nullptr;
    *out = box(lowbit::PackedWeights::from_buffer(data, size));
  });
}

lowbit_status lowbit_repack(const lowbit_packed_weights* w, const char* target,
                            lowbit_packed_weights** out) {
  return guarded([&] {
    require_out(out);
    *out = nullptr;
    *out = box(weights(w).repack(target ? target : ""));
  });
}

void lowbit_free(lowbit_packed_weights* w) { delete w; }

lowbit_status lowbit_load_tuning(const char* path) {
  return guarded([&] { lowbit::load_tuning(path ? path : ""); });
}

}  // extern "C"

// torch.ops.lowbit: packed weights in a uint8 tensor (the whole validated buffer, header
// included) and the linear operation on float32 tensors. The Python package loads this library
// (lowbit/torch.py); C++ and TorchScript reach the ops through the dispatcher. docs/python.md.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/library.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "describe.h"
#include "lowbit/lowbit.hpp"
#include "ops/linear.h"

namespace {

using lowbit::PackedWeights;

constexpr char kRepackHint[] =
    " with lowbit.repack(packed) or torch.ops.lowbit.repack(packed); a model's layers with "
    "lowbit.torch.repack_(model)";

[[noreturn]] void rethrow(const char* op, const lowbit::Error& e) {
  TORCH_CHECK(false, "lowbit.", op, ": ", e.what(),
              e.status() == lowbit::Status::unsupported ? kRepackHint : "");
}

void check_cpu(const char* op, const char* name, const at::Tensor& t, at::ScalarType dtype, int64_t dim) {
  TORCH_CHECK(t.device().is_cpu(), "lowbit.", op, ": ", name, " must be on the CPU (got ", t.device(), ")");
  TORCH_CHECK(t.layout() == at::kStrided, "lowbit.", op, ": ", name, " must be a dense tensor (got ", t.layout(), ")");
  TORCH_CHECK(t.scalar_type() == dtype, "lowbit.", op, ": ", name, " must be ", dtype, " (got ", t.scalar_type(), ")");
  TORCH_CHECK(dim < 0 || t.dim() == dim, "lowbit.", op, ": ", name, " must have ", dim,
              " dimensions (got shape ", t.sizes(), ")");
}

// A uint8 tensor owning packed weights: no copy, the storage frees them.
at::Tensor to_tensor(PackedWeights&& w) {
  auto* owner = new PackedWeights(std::move(w));
  return at::from_blob(const_cast<uint8_t*>(owner->data()), {int64_t(owner->size())},
                       [owner](void*) { delete owner; }, at::TensorOptions().dtype(at::kByte));
}

struct Packed {
  PackedWeights w;
  int64_t n, k;
};

// The weights a packed tensor holds. Validating (both checksums) reads every byte, so it happens
// once per storage, data pointer and version counter; then the kernels read the tensor's memory
// in place (PackedWeights::view). An in-place torch op on the tensor bumps its version, so the
// next call validates again. A weak reference to the storage keeps its address from being reused
// while its entry exists; entries of freed storages are dropped on the next miss.
class PackedCache {
 public:
  std::shared_ptr<const Packed> get(const char* op, const at::Tensor& t) {
    check_cpu(op, "packed", t, at::kByte, 1);
    TORCH_CHECK(t.is_contiguous(), "lowbit.", op, ": packed must be contiguous (got strides ", t.strides(), ")");
    TORCH_CHECK(reinterpret_cast<uintptr_t>(t.data_ptr()) % 64 == 0, "lowbit.", op,
                ": packed must start 64-byte aligned, as tensors lowbit and torch allocate do "
                "(this one is a slice of a larger tensor?); pass packed.clone()");
    const c10::StorageImpl* key = t.storage().unsafeGetStorageImpl();
    const int64_t version = t.is_inference() ? -1 : t._version();
    {
      std::shared_lock<std::shared_mutex> lock(mu_);
      const auto it = entries_.find(key);
      if (it != entries_.end() && it->second.matches(t, version)) return it->second.packed;
    }
    std::shared_ptr<const Packed> p;
    try {
      PackedWeights w = PackedWeights::view(t.data_ptr(), size_t(t.numel()));
      const lowbit::PackedInfo i = w.info();
      p = std::make_shared<const Packed>(Packed{std::move(w), i.n, i.k});
    } catch (const lowbit::Error& e) {
      TORCH_CHECK(false, "lowbit.", op, ": packed is not valid lowbit packed weights: ", e.what());
    }
    std::unique_lock<std::shared_mutex> lock(mu_);
    for (auto it = entries_.begin(); it != entries_.end();)
      it = it->second.storage.expired() ? entries_.erase(it) : std::next(it);
    entries_.insert_or_assign(key, Entry{t.storage().getWeakStorageImpl(), t.data_ptr(), t.numel(), version, p});
    return p;
  }

 private:
  struct Entry {
    c10::weak_intrusive_ptr<c10::StorageImpl> storage;
    const void* data;
    int64_t bytes, version;
    std::shared_ptr<const Packed> packed;
    bool matches(const at::Tensor& t, int64_t v) const {
      return !storage.expired() && data == t.data_ptr() && bytes == t.numel() && version == v;
    }
  };
  std::shared_mutex mu_;
  std::unordered_map<const c10::StorageImpl*, Entry> entries_;
};

PackedCache& cache() {
  static PackedCache* c = new PackedCache;  // never destroyed: ops may run during exit
  return *c;
}

int checked_int(int64_t v, const char* op, const char* name, int64_t lo, int64_t hi) {
  TORCH_CHECK(v >= lo && v <= hi, "lowbit.", op, ": ", name, " = ", v, " is outside [", lo, ", ", hi, "]");
  return int(v);
}

at::Tensor pack(const at::Tensor& qvals, const at::Tensor& scales, const c10::optional<at::Tensor>& zeros,
                const c10::optional<at::Tensor>& bias, int64_t bits, int64_t group,
                const c10::optional<c10::string_view> target) {
  check_cpu("pack", "qvals", qvals, at::kChar, 2);
  check_cpu("pack", "scales", scales, at::kFloat, 2);
  const int64_t n = qvals.size(0), k = qvals.size(1);
  TORCH_CHECK(group > 0 && k % group == 0, "lowbit.pack: group = ", group, " must be positive and divide k = ", k);
  TORCH_CHECK(scales.size(0) == n && scales.size(1) == k / group, "lowbit.pack: scales has shape ",
              scales.sizes(), ", expected [", n, ", ", k / group, "] = [n, k / group]");
  if (zeros) {
    check_cpu("pack", "zeros", *zeros, at::kChar, 2);
    TORCH_CHECK(zeros->sizes() == scales.sizes(), "lowbit.pack: zeros has shape ", zeros->sizes(),
                ", expected the shape of scales ", scales.sizes());
  }
  if (bias) {
    check_cpu("pack", "bias", *bias, at::kFloat, 1);
    TORCH_CHECK(bias->size(0) == n, "lowbit.pack: bias has shape ", bias->sizes(), ", expected [", n, "] = [n]");
  }
  // Packing reads dense rows; a non-contiguous argument is copied here, once.
  const at::Tensor q = qvals.contiguous(), s = scales.contiguous();
  const at::Tensor z = zeros ? zeros->contiguous() : at::Tensor(), b = bias ? bias->contiguous() : at::Tensor();
  try {
    return to_tensor(PackedWeights::pack(
        checked_int(n, "pack", "n", 1, std::numeric_limits<int>::max()),
        checked_int(k, "pack", "k", 1, std::numeric_limits<int>::max()), checked_int(bits, "pack", "bits", 1, 8),
        checked_int(group, "pack", "group", 1, std::numeric_limits<int>::max()), q.data_ptr<int8_t>(),
        s.data_ptr<float>(), zeros ? z.data_ptr<int8_t>() : nullptr, bias ? b.data_ptr<float>() : nullptr,
        target ? std::string_view(target->data(), target->size()) : std::string_view()));
  } catch (const lowbit::Error& e) {
    rethrow("pack", e);
  }
}

at::Tensor linear(const at::Tensor& x, const at::Tensor& packed, c10::optional<double> clamp_min,
                  c10::optional<double> clamp_max, c10::optional<int64_t> num_threads) {
  const std::shared_ptr<const Packed> p = cache().get("linear", packed);
  check_cpu("linear", "x", x, at::kFloat, -1);
  TORCH_CHECK(x.dim() >= 1 && x.size(-1) == p->k, "lowbit.linear: x has shape ", x.sizes(),
              ", expected [..., ", p->k, "] (k of the packed weights)");
  std::vector<int64_t> shape = x.sizes().vec();
  shape.back() = p->n;
  at::Tensor y = at::empty(shape, x.options());
  const int64_t m = x.numel() / p->k;
  if (m == 0) return y;
  lowbit::LinearOptions o;
  o.has_clamp = clamp_min || clamp_max;
  o.clamp_min = clamp_min ? float(*clamp_min) : -std::numeric_limits<float>::infinity();
  o.clamp_max = clamp_max ? float(*clamp_max) : std::numeric_limits<float>::infinity();
  const at::Tensor xc = x.contiguous();  // the library reads dense rows: no copy when x is contiguous
  const int rows = checked_int(m, "linear", "m (rows of x)", 1, std::numeric_limits<int>::max());
  try {
    if (num_threads) {
      // An explicit count runs on lowbit's own pool. A worker still late when the call returns
      // reads the weights in place: it holds their storage, which the caller may drop meanwhile
      // (p's view is not the storage's owner).
      o.num_threads = checked_int(*num_threads, "linear", "num_threads", 1, 1024);
      lowbit::linear_keeping(p->w, std::make_shared<c10::Storage>(packed.storage()), rows, xc.data_ptr<float>(),
                             y.data_ptr<float>(), o);
    } else {
      // torch's threads (docs/architecture.md, "Inside PyTorch"): its OpenMP workers spin for
      // milliseconds after each of torch's own parallel regions, so on their cores a thread of
      // lowbit's would wait for them, while they start on lowbit's tasks at once.
      lowbit::ForeignTeam team;
      team.threads = at::get_num_threads();
      team.fork_join = [](void*, void (*body)(void*), void* arg) {
        at::parallel_for(0, at::get_num_threads(), 1, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) body(arg);
        });
      };
      lowbit::linear_on_team(p->w, rows, xc.data_ptr<float>(), y.data_ptr<float>(), o, team);
    }
  } catch (const lowbit::Error& e) {
    rethrow("linear", e);
  }
  return y;
}

at::Tensor repack(const at::Tensor& packed, const c10::optional<c10::string_view> target) {
  const std::shared_ptr<const Packed> p = cache().get("repack", packed);
  try {
    return to_tensor(p->w.repack(target ? std::string_view(target->data(), target->size()) : std::string_view()));
  } catch (const lowbit::Error& e) {
    rethrow("repack", e);
  }
}

// The header as JSON: the fields of `lowbit inspect --json` (lowbit.torch.packed_info parses it).
std::string info(const at::Tensor& packed) {
  lowbit::cli::Json j;
  j.begin_object();
  lowbit::cli::packed_info_json(j, cache().get("info", packed)->w.info());
  j.end_object();
  return j.str();
}

}  // namespace

TORCH_LIBRARY(lowbit, m) {
  m.def("pack(Tensor qvals, Tensor scales, Tensor? zeros, Tensor? bias, int bits, int group, "
        "str? target=None) -> Tensor");
  m.def("linear(Tensor x, Tensor packed, float? clamp_min=None, float? clamp_max=None, "
        "int? num_threads=None) -> Tensor");
  m.def("repack(Tensor packed, str? target=None) -> Tensor");
  m.def("info(Tensor packed) -> str");
}

// One kernel for every backend, so a tensor on another device or a sparse one gets the ops' own
// error rather than the dispatcher's list of backends.
TORCH_LIBRARY_IMPL(lowbit, CompositeExplicitAutograd, m) {
  m.impl("pack", pack);
  m.impl("linear", linear);
  m.impl("repack", repack);
  m.impl("info", info);
}

// No derivative: linear's output records a node that raises a clear error if backward reaches it
// (instead of silently not propagating gradients to x).
TORCH_LIBRARY_IMPL(lowbit, Autograd, m) {
  m.impl("linear", torch::autograd::autogradNotImplementedFallback());
}

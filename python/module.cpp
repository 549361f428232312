// lowbit._lowbit: the C++ API for Python with numpy arrays in and out (no torch needed).
// The package's __init__.py re-exports it; docs/python.md is the user's guide.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "describe.h"
#include "lowbit/lowbit.h"
#include "format/packed_weights.h"
#include "lowbit/lowbit.hpp"
#include "ops/live_weights.h"
#include "ops/reference.h"
#include "ops/thread_pool.h"

namespace py = pybind11;
using lowbit::PackedWeights;

namespace {

template <typename T>
using dense = py::array_t<T, py::array::c_style | py::array::forcecast>;

// lowbit's statuses as Python exceptions: bad arguments and corrupt data are bad values.
void translate(const lowbit::Error& e) {
  switch (e.status()) {
    case lowbit::Status::invalid_argument:
    case lowbit::Status::corrupt_data: PyErr_SetString(PyExc_ValueError, e.what()); return;
    case lowbit::Status::io_error: PyErr_SetString(PyExc_OSError, e.what()); return;
    case lowbit::Status::out_of_memory: PyErr_SetString(PyExc_MemoryError, e.what()); return;
    default: PyErr_SetString(PyExc_RuntimeError, e.what()); return;
  }
}

py::object json_to_python(const std::string& json) {
  return py::module_::import("json").attr("loads")(json);
}

std::string shape_string(const py::array& a) {
  std::string s = "(";
  for (py::ssize_t i = 0; i < a.ndim(); ++i) s += (i ? ", " : "") + std::to_string(a.shape(i));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

// An array argument of one dtype, C-contiguous (a contiguous array is used as is, anything
// else is copied once: the library reads dense row-major memory). A wrong dtype is an error,
// not a silent cast: casting int64 to int8 would wrap values the range check must see.
template <typename T>
dense<T> typed(const py::handle& obj, const char* name, int ndim) {
  if (!py::isinstance<py::array>(obj))
    throw py::type_error(std::string(name) + " must be a numpy array (got " +
                         std::string(py::str(py::type::of(obj).attr("__name__"))) + ")");
  const auto a = py::reinterpret_borrow<py::array>(obj);
  if (!a.dtype().is(py::dtype::of<T>()))
    throw py::type_error(std::string(name) + " must be " + std::string(py::str(py::dtype::of<T>())) +
                         " (got " + std::string(py::str(a.dtype())) + ")");
  if (ndim > 0 && a.ndim() != ndim)
    throw py::value_error(std::string(name) + " must have " + std::to_string(ndim) +
                          " dimensions (got shape " + shape_string(a) + ")");
  return dense<T>::ensure(a);
}

int to_int(py::ssize_t v, const char* what) {
  if (v > std::numeric_limits<int>::max())
    throw py::value_error(std::string(what) + " = " + std::to_string(v) + " is too large");
  return int(v);
}

struct Unpacked {  // the arguments of pack / _reference_linear, checked against each other
  dense<int8_t> qvals, zeros;
  dense<float> scales, bias;
  lowbit::WeightProblem p;
};

Unpacked unpacked(const py::handle& qvals, const py::handle& scales, const py::handle& zeros,
                  const py::handle& bias, int bits, int group) {
  Unpacked u;
  u.qvals = typed<int8_t>(qvals, "qvals", 2);
  u.scales = typed<float>(scales, "scales", 2);
  u.p.n = to_int(u.qvals.shape(0), "n");
  u.p.k = to_int(u.qvals.shape(1), "k");
  u.p.bits = bits;
  u.p.group_size = group;
  if (group <= 0 || u.p.k % group != 0)
    throw py::value_error("group = " + std::to_string(group) + " must be positive and divide k = " +
                          std::to_string(u.p.k));
  const py::ssize_t groups = u.p.k / group;
  if (u.scales.shape(0) != u.p.n || u.scales.shape(1) != groups)
    throw py::value_error("scales has shape " + shape_string(u.scales) + ", expected (" +
                          std::to_string(u.p.n) + ", " + std::to_string(groups) + ") = (n, k / group)");
  if (!zeros.is_none()) {
    u.zeros = typed<int8_t>(zeros, "zeros", 2);
    if (u.zeros.shape(0) != u.p.n || u.zeros.shape(1) != groups)
      throw py::value_error("zeros has shape " + shape_string(u.zeros) + ", expected the shape of scales " +
                            shape_string(u.scales));
    u.p.has_zeros = true;
  }
  if (!bias.is_none()) {
    u.bias = typed<float>(bias, "bias", 1);
    if (u.bias.shape(0) != u.p.n)
      throw py::value_error("bias has shape " + shape_string(u.bias) + ", expected (" +
                            std::to_string(u.p.n) + ",) = (n,)");
    u.p.has_bias = true;
  }
  return u;
}

lowbit::LinearOptions linear_options(std::optional<float> clamp_min, std::optional<float> clamp_max,
                                     int num_threads) {
  lowbit::LinearOptions o;
  o.has_clamp = clamp_min || clamp_max;
  o.clamp_min = clamp_min.value_or(-std::numeric_limits<float>::infinity());
  o.clamp_max = clamp_max.value_or(std::numeric_limits<float>::infinity());
  o.num_threads = num_threads;
  return o;
}

// y[..., n] = linear(x[..., k]); m = 0 rows gives an empty result.
py::array linear(const PackedWeights& w, const py::handle& x_obj, std::optional<float> clamp_min,
                 std::optional<float> clamp_max, int num_threads, const py::handle& out) {
  const lowbit::PackedInfo info = w.info();
  const dense<float> x = typed<float>(x_obj, "x", 0);
  if (x.ndim() < 1 || x.shape(x.ndim() - 1) != info.k)
    throw py::value_error("x has shape " + shape_string(x) + ", expected (..., " + std::to_string(info.k) +
                          ") (k = " + std::to_string(info.k) + ")");
  std::vector<py::ssize_t> shape(x.shape(), x.shape() + x.ndim());
  shape.back() = info.n;
  const py::ssize_t m = x.size() / info.k;
  py::array_t<float> y;
  if (out.is_none()) {
    y = py::array_t<float>(shape);
  } else {
    if (!py::isinstance<py::array>(out) ||
        !py::reinterpret_borrow<py::array>(out).dtype().is(py::dtype::of<float>()))
      throw py::type_error("out must be a float32 numpy array");
    y = py::reinterpret_borrow<py::array_t<float>>(out);
    const std::vector<py::ssize_t> got(y.shape(), y.shape() + y.ndim());
    if (got != shape) throw py::value_error("out has shape " + shape_string(y) + ", expected the shape of x with n = " +
                                            std::to_string(info.n) + " last");
    if (!(y.flags() & py::array::c_style) || !y.writeable())
      throw py::value_error("out must be C-contiguous and writeable");
    const auto* xb = reinterpret_cast<const char*>(x.data());
    const auto* yb = reinterpret_cast<const char*>(y.data());
    if (xb < yb + y.nbytes() && yb < xb + x.nbytes()) throw py::value_error("out must not overlap x");
  }
  if (m == 0) return std::move(y);
  const int rows = to_int(m, "m (rows of x)");
  const lowbit::LinearOptions o = linear_options(clamp_min, clamp_max, num_threads);
  const float* xp = x.data();
  float* yp = y.mutable_data();
  {
    py::gil_scoped_release unlocked;
    w.linear(rows, xp, yp, o);
  }
  return std::move(y);
}

py::dict packed_info(const PackedWeights& w) {
  lowbit::cli::Json j;
  j.begin_object();
  lowbit::cli::packed_info_json(j, w.info());
  j.end_object();
  return json_to_python(j.str());
}

std::string target_arg(const std::optional<std::string>& t) { return t.value_or(""); }

// The scalar reference (or float math) on unpacked weights: the oracles the tests compare with.
template <bool kFloat>
py::array_t<float> reference(const py::handle& qvals, const py::handle& scales, const py::handle& zeros,
                             const py::handle& bias, int bits, int group, const py::handle& x_obj,
                             std::optional<float> clamp_min, std::optional<float> clamp_max) {
  const Unpacked u = unpacked(qvals, scales, zeros, bias, bits, group);
  lowbit::validate_weights(u.p, u.qvals.data(), u.scales.data(), u.p.has_bias ? u.bias.data() : nullptr);
  const dense<float> x = typed<float>(x_obj, "x", 2);
  if (x.shape(1) != u.p.k) throw py::value_error("x has shape " + shape_string(x) + ", expected (m, k)");
  py::array_t<float> y({x.shape(0), py::ssize_t(u.p.n)});
  const lowbit::ClampRange c{clamp_min || clamp_max, clamp_min.value_or(-INFINITY), clamp_max.value_or(INFINITY)};
  auto* fn = kFloat ? lowbit::float_reference_linear : lowbit::reference_linear;
  fn(u.p, u.qvals.data(), u.scales.data(), u.p.has_zeros ? u.zeros.data() : nullptr,
     u.p.has_bias ? u.bias.data() : nullptr, to_int(x.shape(0), "m"), x.data(), y.mutable_data(), c);
  return y;
}

// Mean nanoseconds per call of `calls` consecutive calls of the C API's lowbit_linear on x [m, k],
// timed in C++: the baseline the op-call overhead is measured against (examples/op_overhead.py).
double time_c_api_linear(const PackedWeights& w, const py::handle& x_obj, int calls, int num_threads) {
  const dense<float> x = typed<float>(x_obj, "x", 2);
  const lowbit::PackedInfo info = w.info();
  if (x.shape(1) != info.k) throw py::value_error("x has shape " + shape_string(x) + ", expected (m, k)");
  if (calls < 1) throw py::value_error("calls must be >= 1");
  lowbit_packed_weights* cw = nullptr;
  if (lowbit_from_buffer(w.data(), w.size(), &cw) != LOWBIT_OK) throw py::value_error(lowbit_last_error());
  const int m = to_int(x.shape(0), "m");
  std::vector<float> y(size_t(m) * size_t(info.n));
  const lowbit_linear_options o{0, 0.0f, 0.0f, num_threads};
  lowbit_status st = LOWBIT_OK;
  std::chrono::steady_clock::duration t{};
  {
    py::gil_scoped_release unlocked;
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < calls && st == LOWBIT_OK; ++r) st = lowbit_linear(cw, m, x.data(), y.data(), &o);
    t = std::chrono::steady_clock::now() - t0;
  }
  lowbit_free(cw);
  if (st != LOWBIT_OK) throw std::runtime_error(lowbit_last_error());
  return std::chrono::duration<double, std::nano>(t).count() / calls;
}

}  // namespace

PYBIND11_MODULE(_lowbit, m) {
  m.doc() = "lowbit: low-bit quantized linear layers on CPUs (numpy API; see docs/python.md)";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const lowbit::Error& e) {
      translate(e);
    }
  });

  py::class_<PackedWeights>(m, "PackedWeights", py::buffer_protocol(),
                            "Validated packed weights (header then payload). Made by pack, load, "
                            "from_bytes or repack; the buffer protocol exposes the bytes read-only.")
      .def_buffer([](const PackedWeights& w) {
        return py::buffer_info(const_cast<uint8_t*>(w.data()), py::ssize_t(w.size()), true);
      })
      .def("linear", &linear, py::arg("x"), py::arg("clamp_min") = py::none(),
           py::arg("clamp_max") = py::none(), py::arg("num_threads") = 0, py::arg("out") = py::none(),
           "y[..., n] = x[..., k] · W^T + bias, clamped; x float32 (a C-contiguous x is not "
           "copied). num_threads <= 0: all cores. out: a float32 C-contiguous array to write.")
      .def("save", &PackedWeights::save, py::arg("path"))
      .def("to_bytes", [](const PackedWeights& w) {
        return py::bytes(reinterpret_cast<const char*>(w.data()), w.size());
      })
      .def("info", &packed_info, "the header: the fields of `lowbit inspect --json`")
      .def("repack", [](const PackedWeights& w, const std::optional<std::string>& t) { return w.repack(target_arg(t)); },
           py::arg("target") = py::none())
      .def_property_readonly("nbytes", &PackedWeights::size)
      .def("__repr__", [](const PackedWeights& w) {
        const lowbit::PackedInfo i = w.info();
        return "<lowbit.PackedWeights n=" + std::to_string(i.n) + " k=" + std::to_string(i.k) +
               " bits=" + std::to_string(i.bits) + " group=" + std::to_string(i.group_size) +
               " layout=" + i.layout + " " + std::to_string(i.total_bytes) + " bytes>";
      })
      .def(py::pickle([](const PackedWeights& w) {
                        return py::bytes(reinterpret_cast<const char*>(w.data()), w.size());
                      },
                      [](const py::bytes& b) {
                        const std::string_view s = b;
                        return PackedWeights::from_buffer(s.data(), s.size());
                      }));

  m.def("pack",
        [](const py::handle& qvals, const py::handle& scales, const py::handle& zeros, const py::handle& bias,
           int bits, int group, const std::optional<std::string>& target) {
          const Unpacked u = unpacked(qvals, scales, zeros, bias, bits, group);
          return PackedWeights::pack(u.p.n, u.p.k, bits, group, u.qvals.data(), u.scales.data(),
                                     u.p.has_zeros ? u.zeros.data() : nullptr,
                                     u.p.has_bias ? u.bias.data() : nullptr, target_arg(target));
        },
        py::arg("qvals"), py::arg("scales"), py::arg("zeros") = py::none(), py::arg("bias") = py::none(),
        py::arg("bits"), py::arg("group"), py::arg("target") = py::none(),
        "Packs qvals int8 [n,k], scales float32 [n,k/group], zeros int8 [n,k/group] or None, "
        "bias float32 [n] or None for this CPU (or a named target).");
  m.def("load", &PackedWeights::load, py::arg("path"));
  m.def("from_bytes",
        [](const py::buffer& b) {
          const py::buffer_info i = b.request();
          if (i.ndim != 1 || i.itemsize != 1 || (i.ndim == 1 && i.strides[0] != 1))
            throw py::value_error("from_bytes needs contiguous bytes (bytes, bytearray, uint8 array)");
          return PackedWeights::from_buffer(i.ptr, size_t(i.size));
        },
        py::arg("data"), "Validates and copies packed weights from bytes-like data.");
  m.def("repack", [](const PackedWeights& w, const std::optional<std::string>& t) { return w.repack(target_arg(t)); },
        py::arg("weights"), py::arg("target") = py::none());
  m.def("quantize_weights",
        [](const py::handle& w_obj, int bits, int group_size, bool asymmetric, const std::string& scale_format) {
          const dense<float> w = typed<float>(w_obj, "w", 2);
          if (scale_format != "f32" && scale_format != "bf16")
            throw py::value_error("scale_format must be 'f32' or 'bf16' (got '" + scale_format + "')");
          const lowbit::QuantizedWeights q = lowbit::quantize_weights(
              w.data(), to_int(w.shape(0), "n"), to_int(w.shape(1), "k"), bits, group_size, asymmetric,
              scale_format == "bf16" ? lowbit::ScaleFormat::bf16 : lowbit::ScaleFormat::f32);
          const py::ssize_t groups = q.k / q.group_size;
          py::array_t<int8_t> qvals({py::ssize_t(q.n), py::ssize_t(q.k)}, q.qvals.data());
          py::array_t<float> scales({py::ssize_t(q.n), groups}, q.scales.data());
          py::object zeros = py::none();
          if (!q.zeros.empty()) zeros = py::array_t<int8_t>({py::ssize_t(q.n), groups}, q.zeros.data());
          return py::make_tuple(qvals, scales, zeros);
        },
        py::arg("w"), py::arg("bits"), py::arg("group_size"), py::arg("asymmetric") = false,
        py::arg("scale_format") = "f32",
        "lowbit's groupwise quantizer: float32 [n,k] -> (qvals int8, scales float32, zeros int8 or None).");
  m.def("info", [] { return json_to_python(lowbit::cli::info_json()); },
        "This CPU's profile, kernels and layouts: the dict `lowbit info --json` prints.");
  m.def("explain",
        [](int n, int k, int m_rows, int bits, int group, bool zeros, bool bias, std::optional<int> threads,
           const std::optional<std::string>& target, std::optional<double> working_set_mib) {
          if (threads && *threads < 1) throw py::value_error("threads must be >= 1 (got " + std::to_string(*threads) + ")");
          if (working_set_mib && !(*working_set_mib >= 0 && *working_set_mib <= double(1 << 24)))
            throw py::value_error("working_set_mib must be in [0, 16777216] (got " + std::to_string(*working_set_mib) + ")");
          const lowbit::WeightProblem p{n, k, bits, group, zeros, bias};
          // By default the plan a call in this process gets: with its live packed weights as the
          // working set when they exceed L3 (run_linear's rule); another target's plan alone.
          const size_t ws = working_set_mib ? size_t(*working_set_mib * double(1 << 20))
                            : target ? 0
                                     : lowbit::planning_working_set(lowbit::host_profile());
          return json_to_python(lowbit::cli::explanation_json(
              lowbit::cli::explain(p, m_rows, threads.value_or(0), target_arg(target), ws)));
        },
        py::arg("n"), py::arg("k"), py::arg("m"), py::arg("bits"), py::arg("group"), py::arg("zeros") = false,
        py::arg("bias") = false, py::arg("threads") = py::none(), py::arg("target") = py::none(),
        py::arg("working_set_mib") = py::none(),
        "The layout decision and plan with every candidate: the dict `lowbit explain --json` prints. "
        "working_set_mib: plan as one layer of a model of that many MiB of packed weights (default: "
        "this process's live packed weights when they exceed L3, as its calls are planned).");
  m.def("_reference_linear", &reference<false>, py::arg("qvals"), py::arg("scales"), py::arg("zeros"),
        py::arg("bias"), py::arg("bits"), py::arg("group"), py::arg("x"), py::arg("clamp_min") = py::none(),
        py::arg("clamp_max") = py::none(), "The scalar reference (the bit-exact oracle), for tests.");
  m.def("_time_c_api_linear", &time_c_api_linear, py::arg("weights"), py::arg("x"), py::arg("calls"),
        py::arg("num_threads"), "Mean ns per call of the C API's lowbit_linear, for benchmarks.");
  // A worker held mid-task (ops/thread_pool.h), for the tests that no call waits for it.
  using Hold = lowbit::WorkerHoldForTesting;
  m.def("_hold_next_worker_task", &Hold::arm, "Tests: hold the next task a worker takes (<= 60 s).");
  m.def("_worker_held", &Hold::holding);
  m.def("_release_held_worker", &Hold::release);
  m.def("_worker_hold_timed_out", &Hold::timed_out);
  m.def("_worker_tasks_taken", &Hold::tasks_taken);
  m.def("_stop_holding_workers", &Hold::stop);
  m.def("_float_reference_linear", &reference<true>, py::arg("qvals"), py::arg("scales"), py::arg("zeros"),
        py::arg("bias"), py::arg("bits"), py::arg("group"), py::arg("x"), py::arg("clamp_min") = py::none(),
        py::arg("clamp_max") = py::none(), "x · dequant(W)^T + bias in double on unquantized x, for tests.");
}

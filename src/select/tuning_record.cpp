#include "select/tuning_record.h"

#include <zlib.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "registry/registry.h"
#include "util/error.h"

#ifndef LOWBIT_VERSION_STRING
#error "LOWBIT_VERSION_STRING must be defined by the build (src/CMakeLists.txt)"
#endif

namespace lowbit {

namespace {

// The checksum covers the whole text with its own 8 hex digits read as "00000000"; the writer
// puts it exactly here, so a record edited by hand must be written again by lowbit.
constexpr std::string_view kChecksumKey = "\"checksum\": \"crc32:";
constexpr size_t kMaxRecordBytes = 16u << 20;

uint32_t text_crc(std::string_view text, size_t digits_at) {
  std::string copy(text);
  copy.replace(digits_at, 8, "00000000");
  return uint32_t(crc32(0L, reinterpret_cast<const Bytef*>(copy.data()), uInt(copy.size())));
}

std::string hex32(uint32_t v) {
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", v);
  return buf;
}

// ---- writing ------------------------------------------------------------------------------

void write_by_bits(JsonWriter& j, const char* key, const float* v) {
  j.key(key).begin_array();
  for (int b = 1; b <= kMaxBits; ++b) j.exact(v[b]);
  j.end_array();
}

// ---- reading ------------------------------------------------------------------------------

// Typed access to one object of the record; errors name the field's path.
class Fields {
 public:
  Fields(const JsonValue& v, std::string path) : v_(v), path_(std::move(path)) {
    if (!v.is(JsonValue::Type::object)) bad("", "an object");
  }
  [[noreturn]] void bad(const std::string& key, const char* expected) const {
    fail(Status::corrupt_data, "tuning record: ", path_, key.empty() ? "" : ".", key, " must be ", expected);
  }
  const JsonValue& need(const std::string& key) const {
    const JsonValue* x = v_.get(key);
    if (x == nullptr) fail(Status::corrupt_data, "tuning record: ", path_, " has no '", key, "'");
    return *x;
  }
  bool has(const std::string& key) const { return v_.get(key) != nullptr; }
  double number(const std::string& key, double lo, double hi) const {
    const JsonValue& x = need(key);
    if (!x.is(JsonValue::Type::number) || !std::isfinite(x.number) || x.number < lo || x.number > hi)
      bad(key, concat("a number in [", lo, ", ", hi, "]").c_str());
    return x.number;
  }
  int64_t integer(const std::string& key, int64_t lo, int64_t hi) const {
    const double d = number(key, double(lo), double(hi));
    if (d != std::floor(d)) bad(key, "an integer");
    return int64_t(d);
  }
  std::string string(const std::string& key, size_t max_len) const {
    const JsonValue& x = need(key);
    if (!x.is(JsonValue::Type::string) || x.string.size() > max_len)
      bad(key, concat("a string of at most ", max_len, " bytes").c_str());
    return x.string;
  }
  // A name: letters, digits, '_', '-', '.', 1..max_len bytes.
  std::string name(const std::string& key, size_t max_len = 128) const {
    std::string s = string(key, max_len);
    bool ok = !s.empty();
    for (char c : s)
      ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-' || c == '.' || c == ':');
    if (!ok) bad(key, "a name (letters, digits, _ - . :)");
    return s;
  }
  std::string hex(const std::string& key, size_t digits) const {
    std::string s = string(key, digits);
    bool ok = s.size() == digits;
    for (char c : s) ok = ok && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
    if (!ok) bad(key, concat(digits, " lowercase hex digits").c_str());
    return s;
  }
  const std::vector<JsonValue>& array(const std::string& key, size_t min, size_t max) const {
    const JsonValue& x = need(key);
    if (!x.is(JsonValue::Type::array) || x.items.size() < min || x.items.size() > max)
      bad(key, concat("an array of ", min, "..", max, " elements").c_str());
    return x.items;
  }
  std::vector<double> numbers(const std::string& key, size_t min, size_t max, double lo, double hi) const {
    std::vector<double> out;
    for (const JsonValue& x : array(key, min, max)) {
      if (!x.is(JsonValue::Type::number) || !std::isfinite(x.number) || x.number < lo || x.number > hi)
        bad(key, concat("numbers in [", lo, ", ", hi, "]").c_str());
      out.push_back(x.number);
    }
    return out;
  }
  Fields object(const std::string& key) const { return Fields(need(key), path_ + "." + key); }
  const std::string& path() const { return path_; }

 private:
  const JsonValue& v_;
  std::string path_;
};

// Bandwidth, bytes per cycle: a 2-core VM reads ~10 from DRAM, a server core ~60 from L2.
constexpr double kMaxBandwidth = 1000.0;

BandwidthTable read_table(const Fields& f) {
  BandwidthTable t;
  t.l2 = f.numbers("l2", 0, kMaxRecordThreads, 1e-3, kMaxBandwidth);
  t.l3 = f.numbers("l3", 0, kMaxRecordThreads, 1e-3, kMaxBandwidth);
  t.dram = f.numbers("dram", 0, kMaxRecordThreads, 1e-3, kMaxBandwidth);
  return t;
}

CpuSignature read_cpu(const Fields& f) {
  CpuSignature c;
  const std::string arch = f.string("arch", 16);
  if (arch == "x86_64") c.arch = Arch::x86_64;
  else if (arch == "arm64") c.arch = Arch::arm64;
  else f.bad("arch", "\"x86_64\" or \"arm64\"");
  c.id.vendor = f.string("vendor", 64);
  c.id.family = uint32_t(f.integer("family", 0, 0xFFFF));
  c.id.model = uint32_t(f.integer("model", 0, 0xFFFF));
  c.id.stepping = uint32_t(f.integer("stepping", 0, 0xFFFF));
  c.id.midr = uint64_t(f.integer("midr", 0, 0xFFFFFFFFll));
  if (!uarch_from_name(f.string("uarch", 32), &c.uarch)) f.bad("uarch", "a known uarch name");
  for (const JsonValue& x : f.array("isa", 0, 64)) {
    Isa isa;
    if (!x.is(JsonValue::Type::string) || !isa_from_name(x.string, &isa)) f.bad("isa", "known ISA feature names");
    c.isa.add(isa);
  }
  c.cores = int(f.integer("cores", 1, 4096));
  return c;
}

KernelEntry read_kernel(const Fields& f) {
  KernelEntry e;
  e.name = f.name("name");
  e.identity = f.hex("identity", 16);
  const std::vector<double> unpack = f.numbers("unpack", kMaxBits, kMaxBits, 0.0, kMaxCyclesPerValue);
  const std::vector<double> dot = f.numbers("dot", kMaxBits, kMaxBits, 0.0, kMaxCyclesPerValue);
  for (int b = 1; b <= kMaxBits; ++b) {
    e.cost.unpack[b] = float(unpack[size_t(b - 1)]);
    e.cost.dot[b] = float(dot[size_t(b - 1)]);
  }
  e.cost.unpack[0] = e.cost.unpack[1];
  e.cost.dot[0] = e.cost.dot[1];
  e.cost.call = float(f.number("call", 0.0, kMaxCallCycles));
  e.cost.group = float(f.number("group", 0.0, kMaxGroupCycles));
  e.cost.group_row = float(f.number("group_row", 0.0, kMaxGroupCycles));
  e.cost.narrow = float(f.number("narrow", 0.0, kMaxCyclesPerValue));
  e.cost.wide_cols = int(f.integer("wide_cols", 0, 1 << 16));
  if (f.has("uarch_factors")) {
    const Fields u = f.object("uarch_factors");
    const JsonValue& obj = f.need("uarch_factors");
    if (obj.members.size() > 4) f.bad("uarch_factors", "at most 4 uarchs");
    int i = 0;
    for (const auto& [name, v] : obj.members) {
      Uarch ua;
      if (!uarch_from_name(name, &ua) || ua == Uarch::unknown) u.bad(name, "a known uarch");
      e.cost.prefers[i++] = {ua, float(u.number(name, 0.01, 100.0))};
    }
  }
  if (f.has("bandwidth")) e.bandwidth = read_table(f.object("bandwidth"));
  e.fit_error = f.number("fit_error", 0.0, kMaxFitError);
  e.samples = int(f.integer("samples", 0, 1000000000));
  if (f.has("prefetch_bytes")) {
    e.prefetch_bytes = int(f.integer("prefetch_bytes", 0, kMaxPrefetchBytes));
    if (e.prefetch_bytes % 64 != 0) f.bad("prefetch_bytes", "a multiple of 64");
  }
  return e;
}

PlanOverride read_override(const Fields& f) {
  PlanOverride o;
  o.layout = f.name("layout");
  o.n = int(f.integer("n", 1, 1 << 24));
  o.k = int(f.integer("k", 1, 1 << 24));
  o.bits = int(f.integer("bits", 1, kMaxBits));
  o.group = int(f.integer("group", 1, 1 << 24));
  o.m = int(f.integer("m", 1, 1 << 24));
  o.threads = int(f.integer("threads", 1, 4096));
  int rows = 0;
  for (const JsonValue& s : f.array("segments", 1, 2)) {
    const Fields sf(s, f.path() + ".segments[]");
    o.segments.push_back({sf.name("kernel"), int(sf.integer("rows", 1, 1 << 24))});
    rows += o.segments.back().second;
  }
  if (rows != o.m) f.bad("segments", "rows that add up to m");
  o.row_tile = int(f.integer("row_tile", 1, 1 << 24));
  o.col_tile = int(f.integer("col_tile", 1, 1 << 24));
  o.speedup = f.number("speedup", 0.0, 1000.0);
  return o;
}

std::string version_major_minor(const std::string& v) {
  const size_t a = v.find('.');
  const size_t b = a == std::string::npos ? a : v.find('.', a + 1);
  return v.substr(0, b);
}

}  // namespace

const char* library_version() { return LOWBIT_VERSION_STRING; }

void bandwidth_json(JsonWriter& j, const BandwidthTable& t) {
  j.begin_object();
  for (const auto& [name, v] : {std::pair{"l2", &t.l2}, std::pair{"l3", &t.l3}, std::pair{"dram", &t.dram}}) {
    j.key(name).begin_array();
    for (double x : *v) j.exact(x);
    j.end_array();
  }
  j.end_object();
}

TuningRecord record_for_this_machine(const std::string& name) {
  TuningRecord r;
  r.name = name;
  r.lowbit_version = library_version();
  r.scope = "cpu";
  r.cpu = host_signature();
  r.registry = default_registry().fingerprint();
  return r;
}

std::string record_to_json(const TuningRecord& r) {
  JsonWriter j(2);
  j.begin_object();
  j.field("lowbit_tuning", r.format);
  j.key("checksum").value("crc32:00000000");
  j.field("name", r.name).field("lowbit_version", r.lowbit_version).field("scope", r.scope);
  j.field("source", r.source);
  j.key("cpu").begin_object();
  j.field("arch", arch_name(r.cpu.arch)).field("vendor", r.cpu.id.vendor);
  j.field("family", int(r.cpu.id.family)).field("model", int(r.cpu.id.model));
  j.field("stepping", int(r.cpu.id.stepping)).field("midr", (unsigned long long)r.cpu.id.midr);
  j.field("uarch", uarch_name(r.cpu.uarch));
  j.key("isa").begin_array();
  for (int i = 0; i < kIsaCount; ++i)
    if (r.cpu.isa.has(Isa(i))) j.value(isa_name(Isa(i)));
  j.end_array();
  j.field("cores", r.cpu.cores).end_object();
  j.field("registry", r.registry);
  j.key("caches").begin_object().field("l1d", (unsigned long long)r.caches.l1d);
  j.field("l2", (unsigned long long)r.caches.l2).field("l3", (unsigned long long)r.caches.l3).end_object();
  j.key("bandwidth");
  bandwidth_json(j, r.bandwidth);
  j.key("task_cycles").exact(r.task_cycles);
  j.key("dispatch_cycles").begin_array();
  for (double d : r.dispatch_cycles) j.exact(d);
  j.end_array();
  j.key("kernels").begin_array();
  for (const KernelEntry& e : r.kernels) {
    j.begin_object().field("name", e.name).field("identity", e.identity);
    write_by_bits(j, "unpack", e.cost.unpack);
    write_by_bits(j, "dot", e.cost.dot);
    j.key("call").exact(e.cost.call);
    j.key("group").exact(e.cost.group);
    j.key("group_row").exact(e.cost.group_row);
    j.key("narrow").exact(e.cost.narrow);
    j.field("wide_cols", e.cost.wide_cols);
    if (e.cost.prefers[0].uarch != Uarch::unknown) {
      j.key("uarch_factors").begin_object();
      for (const UarchFactor& u : e.cost.prefers)
        if (u.uarch != Uarch::unknown) j.key(uarch_name(u.uarch)).exact(u.factor);
      j.end_object();
    }
    if (!e.bandwidth.empty()) {
      j.key("bandwidth");
      bandwidth_json(j, e.bandwidth);
    }
    j.key("fit_error").exact(e.fit_error);
    j.field("samples", e.samples);
    if (e.prefetch_bytes >= 0) j.field("prefetch_bytes", e.prefetch_bytes);
    j.end_object();
  }
  j.end_array();
  j.key("overrides").begin_array();
  for (const PlanOverride& o : r.overrides) {
    j.begin_object().field("layout", o.layout).field("n", o.n).field("k", o.k).field("bits", o.bits);
    j.field("group", o.group).field("m", o.m).field("threads", o.threads);
    j.key("segments").begin_array();
    for (const auto& [kernel, rows] : o.segments)
      j.begin_object().field("kernel", kernel).field("rows", rows).end_object();
    j.end_array();
    j.field("row_tile", o.row_tile).field("col_tile", o.col_tile);
    j.key("speedup").exact(o.speedup);
    j.end_object();
  }
  j.end_array();
  j.end_object();
  return with_valid_checksum(j.str() + "\n");
}

std::string with_valid_checksum(std::string text) {
  const size_t key = text.find(kChecksumKey);
  if (key == std::string::npos || key + kChecksumKey.size() + 8 > text.size()) return text;
  const size_t at = key + kChecksumKey.size();
  text.replace(at, 8, hex32(text_crc(text, at)));
  return text;
}

TuningRecord parse_record(std::string_view text) {
  if (text.size() > kMaxRecordBytes)
    fail(Status::corrupt_data, "tuning record: ", text.size(), " bytes (at most ", kMaxRecordBytes, ")");
  const size_t key = text.find(kChecksumKey);
  if (key == std::string_view::npos || text.find(kChecksumKey, key + 1) != std::string_view::npos ||
      text.size() < key + kChecksumKey.size() + 9)
    fail(Status::corrupt_data, "tuning record: no checksum (", kChecksumKey, "…\" exactly once)");
  const size_t at = key + kChecksumKey.size();
  const std::string stored(text.substr(at, 8));
  const std::string actual = hex32(text_crc(text, at));
  if (stored != actual)
    fail(Status::corrupt_data, "tuning record: checksum crc32:", stored, " does not match the text (crc32:",
         actual, "): truncated, corrupt or edited");
  const JsonValue doc = parse_json(text);
  const Fields f(doc, "record");
  TuningRecord r;
  r.format = int(f.integer("lowbit_tuning", 0, 1 << 30));
  if (r.format != kTuningFormat)
    fail(Status::corrupt_data, "tuning record: format ", r.format, " (this lowbit reads format ", kTuningFormat, ")");
  r.name = f.name("name");
  r.lowbit_version = f.name("lowbit_version", 32);
  r.scope = f.string("scope", 8);
  if (r.scope != "cpu" && r.scope != "uarch") f.bad("scope", "\"cpu\" or \"uarch\"");
  r.source = f.string("source", 4096);
  r.cpu = read_cpu(f.object("cpu"));
  r.registry = f.hex("registry", 16);
  const Fields caches = f.object("caches");
  r.caches.l1d = size_t(caches.integer("l1d", 0, 1 << 30));
  r.caches.l2 = size_t(caches.integer("l2", 0, 1ll << 32));
  r.caches.l3 = size_t(caches.integer("l3", 0, 1ll << 36));
  r.bandwidth = read_table(f.object("bandwidth"));
  r.task_cycles = f.number("task_cycles", 0.0, 1e7);
  r.dispatch_cycles = f.numbers("dispatch_cycles", 0, kMaxRecordThreads, 0.0, 1e8);
  for (const JsonValue& k : f.array("kernels", 0, 4096)) r.kernels.push_back(read_kernel(Fields(k, "record.kernels[]")));
  for (const JsonValue& o : f.array("overrides", 0, 1 << 20))
    r.overrides.push_back(read_override(Fields(o, "record.overrides[]")));
  return r;
}

std::string record_mismatch(const TuningRecord& r, const CpuSignature& host) {
  if (r.format != kTuningFormat) return concat("format ", r.format, ", this lowbit reads ", kTuningFormat);
  if (version_major_minor(r.lowbit_version) != version_major_minor(library_version()))
    return concat("written by lowbit ", r.lowbit_version, ", this is ", library_version(),
                  " (records carry over between patch versions only)");
  auto cpu = [](const CpuSignature& s) {
    return concat(arch_name(s.arch), " ", s.id.vendor, " family ", s.id.family, " model ", s.id.model,
                  " stepping ", s.id.stepping, " midr ", s.id.midr, " ", uarch_name(s.uarch), " ",
                  s.isa.to_string(), " ", s.cores, " cores");
  };
  const CpuSignature& c = r.cpu;
  // The host may have features the record lacks: a later lowbit detects more of the same CPU
  // (a kernel needing them has no measured entry and runs on the generic numbers).
  const bool same_kind = c.arch == host.arch && c.id.vendor == host.id.vendor && c.uarch == host.uarch;
  const bool same_cpu = same_kind && c.id.family == host.id.family && c.id.model == host.id.model &&
                        c.id.stepping == host.id.stepping && c.id.midr == host.id.midr &&
                        host.isa.contains(c.isa) && c.cores == host.cores;
  if (r.scope == "uarch" ? !same_kind : !same_cpu)
    return concat("for another CPU (record: ", cpu(c), "; this: ", cpu(host), ", scope ", r.scope, ")");
  return {};
}

CpuSignature host_signature() {
  static const CpuSignature sig = [] {
    const CpuProfile p = detect_host_profile();
    CpuSignature s;
    s.arch = p.arch;
    s.id = host_cpu_id();
    s.uarch = p.main_uarch();
    s.isa = p.isa;
    s.cores = int(p.num_threads());
    return s;
  }();
  return sig;
}

std::string record_file_name(const CpuSignature& sig) {
  std::string vendor;
  for (char c : sig.id.vendor)
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) vendor += c;
  const std::string part = sig.arch == Arch::arm64
      ? concat("midr", hex32(uint32_t(sig.id.midr)))
      : concat("f", sig.id.family, "m", sig.id.model, "s", sig.id.stepping);
  return concat("tuning-", arch_name(sig.arch), "-", vendor.empty() ? "unknown" : vendor, "-", part, "-",
                uarch_name(sig.uarch), "-", sig.cores, "c.json");
}

std::string tuning_cache_dir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/lowbit";
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] != '\0') return std::string(home) + "/.cache/lowbit";
  return {};
}

}  // namespace lowbit

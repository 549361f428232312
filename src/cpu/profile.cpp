#include "cpu/profile.h"

#include <charconv>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <utility>

namespace lowbit {
namespace {

constexpr size_t K = size_t{1} << 10;
constexpr size_t M = size_t{1} << 20;

struct UarchInfo {
  const char* name;
  Arch arch;
  CacheSizes caches;  // typical per-core l1d and l2, shared l3 (0 = none)
};

// Indexed by Uarch. Cache sizes are typical configurations, only used when detection fails or
// is implausible. A cluster-shared L2 is given per core (Apple M1: 12 MiB / 4 P-cores).
constexpr UarchInfo kUarchs[] = {
    {"unknown", Arch::unknown, {}},
    {"haswell", Arch::x86_64, {32 * K, 256 * K, 8 * M}},
    {"skylake", Arch::x86_64, {32 * K, 256 * K, 8 * M}},
    {"skylake-x", Arch::x86_64, {32 * K, 1 * M, 16 * M}},
    {"icelake", Arch::x86_64, {48 * K, 1280 * K, 16 * M}},
    {"tigerlake", Arch::x86_64, {48 * K, 1280 * K, 12 * M}},
    {"sapphirerapids", Arch::x86_64, {48 * K, 2 * M, 32 * M}},
    {"emeraldrapids", Arch::x86_64, {48 * K, 2 * M, 64 * M}},
    {"graniterapids", Arch::x86_64, {48 * K, 2 * M, 64 * M}},
    {"alderlake-p", Arch::x86_64, {48 * K, 1280 * K, 16 * M}},
    {"alderlake-e", Arch::x86_64, {32 * K, 512 * K, 16 * M}},
    {"raptorlake-p", Arch::x86_64, {48 * K, 2 * M, 24 * M}},
    {"meteorlake-p", Arch::x86_64, {48 * K, 2 * M, 16 * M}},
    {"meteorlake-e", Arch::x86_64, {32 * K, 512 * K, 16 * M}},
    {"zen", Arch::x86_64, {32 * K, 512 * K, 8 * M}},
    {"zen2", Arch::x86_64, {32 * K, 512 * K, 16 * M}},
    {"zen3", Arch::x86_64, {32 * K, 512 * K, 32 * M}},
    {"zen4", Arch::x86_64, {32 * K, 1 * M, 32 * M}},
    {"zen5", Arch::x86_64, {48 * K, 1 * M, 32 * M}},
    {"cortex-a53", Arch::arm64, {32 * K, 128 * K, 0}},
    {"cortex-a55", Arch::arm64, {32 * K, 128 * K, 2 * M}},
    {"cortex-a510", Arch::arm64, {32 * K, 256 * K, 4 * M}},
    {"cortex-a520", Arch::arm64, {32 * K, 256 * K, 4 * M}},
    {"cortex-a57", Arch::arm64, {32 * K, 512 * K, 0}},
    {"cortex-a72", Arch::arm64, {32 * K, 512 * K, 0}},
    {"cortex-a73", Arch::arm64, {64 * K, 256 * K, 0}},
    {"cortex-a75", Arch::arm64, {64 * K, 256 * K, 2 * M}},
    {"cortex-a76", Arch::arm64, {64 * K, 512 * K, 2 * M}},
    {"cortex-a77", Arch::arm64, {64 * K, 512 * K, 4 * M}},
    {"cortex-a78", Arch::arm64, {64 * K, 512 * K, 4 * M}},
    {"cortex-a710", Arch::arm64, {64 * K, 512 * K, 8 * M}},
    {"cortex-a715", Arch::arm64, {64 * K, 512 * K, 8 * M}},
    {"cortex-a720", Arch::arm64, {64 * K, 512 * K, 8 * M}},
    {"cortex-x1", Arch::arm64, {64 * K, 1 * M, 8 * M}},
    {"cortex-x2", Arch::arm64, {64 * K, 1 * M, 8 * M}},
    {"cortex-x3", Arch::arm64, {64 * K, 1 * M, 8 * M}},
    {"cortex-x4", Arch::arm64, {64 * K, 2 * M, 8 * M}},
    {"neoverse-n1", Arch::arm64, {64 * K, 1 * M, 32 * M}},
    {"neoverse-n2", Arch::arm64, {64 * K, 1 * M, 32 * M}},
    {"neoverse-v1", Arch::arm64, {64 * K, 1 * M, 32 * M}},
    {"neoverse-v2", Arch::arm64, {64 * K, 2 * M, 32 * M}},
    {"apple-m1", Arch::arm64, {128 * K, 3 * M, 8 * M}},
    {"apple-m2", Arch::arm64, {128 * K, 4 * M, 8 * M}},
    {"apple-m3", Arch::arm64, {128 * K, 4 * M, 8 * M}},
    {"apple-m4", Arch::arm64, {128 * K, 4 * M, 8 * M}},
};
static_assert(sizeof(kUarchs) / sizeof(kUarchs[0]) == static_cast<size_t>(Uarch::count_),
              "kUarchs must list every Uarch in enum order");

constexpr int kMaxSpecCores = 4096;  // keeps a typo like "100000000xzen4" from allocating GBs

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (size_t start = 0;;) {
    size_t end = s.find(sep, start);
    out.push_back(trim(s.substr(start, end == std::string_view::npos ? end : end - start)));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

[[noreturn]] void spec_error(std::string_view spec, const std::string& why) {
  throw std::invalid_argument("profile spec " + quoted(spec) + ": " + why);
}

// LOWBIT_ISA tiers; each includes the tiers below it.
constexpr IsaSet kX86Avx2{Isa::sse41, Isa::avx, Isa::avx2, Isa::fma, Isa::f16c};
constexpr IsaSet kX86Avx512 =
    kX86Avx2 | IsaSet{Isa::avx512f, Isa::avx512bw, Isa::avx512vl, Isa::avx512dq};
constexpr IsaSet kArmDotprod{Isa::neon, Isa::dotprod};
constexpr IsaSet kArmI8mm = kArmDotprod | IsaSet{Isa::i8mm};

struct Tier {
  const char* name;
  Arch arch;
  IsaSet isa;
};
constexpr Tier kTiers[] = {
    {"sse41", Arch::x86_64, {Isa::sse41}},
    {"avx2", Arch::x86_64, kX86Avx2},
    {"avxvnni", Arch::x86_64, kX86Avx2 | IsaSet{Isa::avxvnni}},
    {"avx512", Arch::x86_64, kX86Avx512},
    {"avx512vnni", Arch::x86_64,
     kX86Avx512 | IsaSet{Isa::avx512vnni, Isa::avxvnni, Isa::avx512vbmi, Isa::avx512bf16,
                         Isa::gfni, Isa::avx512vpopcntdq}},
    {"neon", Arch::arm64, {Isa::neon}},
    {"dotprod", Arch::arm64, kArmDotprod},
    {"i8mm", Arch::arm64, kArmI8mm},
    {"sve", Arch::arm64, kArmI8mm | IsaSet{Isa::sve, Isa::sve2}},
};

bool arch_matches(Arch want, Arch have) {
  return want == Arch::unknown || have == Arch::unknown || want == have;
}

// Reads LOWBIT_L1D / LOWBIT_L2 / LOWBIT_L3 into *out when set and non-empty.
void cache_override(const char* var, size_t* out, bool allow_zero) {
  const char* v = std::getenv(var);
  if (v == nullptr || *v == '\0') return;
  size_t bytes = parse_cache_size(var, v);
  if (bytes == 0 && !allow_zero)
    throw std::invalid_argument(std::string(var) + "=" + quoted(v) + ": must be positive");
  *out = bytes;
}

}  // namespace

const char* uarch_name(Uarch u) {
  auto i = static_cast<size_t>(u);
  return i < static_cast<size_t>(Uarch::count_) ? kUarchs[i].name : "invalid";
}

bool uarch_from_name(std::string_view s, Uarch* out) {
  for (size_t i = 0; i < static_cast<size_t>(Uarch::count_); ++i) {
    if (s == kUarchs[i].name) {
      *out = static_cast<Uarch>(i);
      return true;
    }
  }
  return false;
}

Arch uarch_arch(Uarch u) {
  auto i = static_cast<size_t>(u);
  return i < static_cast<size_t>(Uarch::count_) ? kUarchs[i].arch : Arch::unknown;
}

CacheSizes default_caches(Uarch u, Arch arch) {
  if (u != Uarch::unknown && u < Uarch::count_) return kUarchs[static_cast<size_t>(u)].caches;
  switch (arch) {
    case Arch::x86_64: return {32 * K, 1 * M, 16 * M};
    case Arch::arm64: return {64 * K, 512 * K, 8 * M};
    default: return {32 * K, 512 * K, 8 * M};
  }
}

CacheSizes sanitize_caches(CacheSizes c, Uarch u, Arch arch) {
  const CacheSizes d = default_caches(u, arch);
  if (c.l1d < 8 * K || c.l1d > 256 * K) c.l1d = d.l1d;
  if (c.l2 < 128 * K || c.l2 > 16 * M) c.l2 = d.l2;
  if (c.l3 > 256 * M) c.l3 = d.l3;  // hypervisors have been seen to claim ~508 MiB
  return c;
}

size_t parse_cache_size(std::string_view var, std::string_view value) {
  auto fail = [&]() -> size_t {
    throw std::invalid_argument(std::string(var) + "=" + quoted(value) +
                                ": invalid cache size (expected bytes, or a number with a "
                                "K, M or G suffix)");
  };
  size_t n = 0;
  const char* end = value.data() + value.size();
  auto [p, ec] = std::from_chars(value.data(), end, n);
  if (ec != std::errc() || p == value.data()) return fail();
  std::string_view suffix(p, static_cast<size_t>(end - p));
  int shift = 0;
  if (!suffix.empty()) {
    switch (suffix.front()) {
      case 'k': case 'K': shift = 10; break;
      case 'm': case 'M': shift = 20; break;
      case 'g': case 'G': shift = 30; break;
      default: return fail();
    }
    suffix.remove_prefix(1);
    if (!(suffix.empty() || suffix == "B" || suffix == "b" || suffix == "iB")) return fail();
  }
  if (n > (std::numeric_limits<size_t>::max() >> shift)) return fail();
  return n << shift;
}

std::string cache_size_to_string(size_t bytes) {
  if (bytes == 0) return "0";
  for (auto [shift, suffix] : {std::pair{30, 'G'}, std::pair{20, 'M'}, std::pair{10, 'K'}}) {
    if (bytes % (size_t{1} << shift) == 0) return std::to_string(bytes >> shift) + suffix;
  }
  return std::to_string(bytes);
}

Uarch CpuProfile::main_uarch() const {
  if (uarchs.empty()) return Uarch::unknown;
  std::vector<size_t> count(uarchs.size(), 0);
  for (const CoreInfo& c : cores)
    if (c.uarch_index < count.size()) ++count[c.uarch_index];
  size_t best = 0;
  for (size_t i = 1; i < count.size(); ++i)
    if (count[i] > count[best]) best = i;
  return uarchs[best];
}

std::string CpuProfile::to_spec() const {
  std::string s = arch_name(arch);
  s += ':';
  std::string feats = isa.empty() ? "" : isa.to_string();
  for (char& ch : feats)
    if (ch == '+') ch = ',';
  s += feats;
  s += ";cores=";
  // A group is a run of cores with the same cluster and uarch.
  for (size_t i = 0; i < cores.size();) {
    size_t j = i + 1;
    while (j < cores.size() && cores[j].cluster == cores[i].cluster &&
           cores[j].uarch == cores[i].uarch)
      ++j;
    if (i > 0) s += ',';
    s += std::to_string(j - i) + "x" + uarch_name(cores[i].uarch);
    i = j;
  }
  s += ";l1d=" + cache_size_to_string(caches.l1d);
  s += ";l2=" + cache_size_to_string(caches.l2);
  s += ";l3=" + cache_size_to_string(caches.l3);
  return s;
}

CpuProfile parse_profile_spec(std::string_view spec) {
  CpuProfile p;
  p.source = "spec";
  std::vector<std::string_view> sections = split(spec, ';');

  // "<arch>:<feat>,<feat>..."
  std::string_view head = sections[0];
  size_t colon = head.find(':');
  if (colon == std::string_view::npos)
    spec_error(spec, "expected '<arch>:<features>' first, got " + quoted(head));
  std::string_view arch = trim(head.substr(0, colon));
  if (arch == "x86_64") {
    p.arch = Arch::x86_64;
  } else if (arch == "arm64" || arch == "aarch64") {
    p.arch = Arch::arm64;
    p.isa.add(Isa::neon);  // armv8-a baseline
  } else {
    spec_error(spec, "unknown arch " + quoted(arch) + " (expected x86_64 or arm64)");
  }
  std::string_view feats = trim(head.substr(colon + 1));
  if (!feats.empty()) {
    for (std::string_view f : split(feats, ',')) {
      Isa isa;
      if (!isa_from_name(f, &isa)) spec_error(spec, "unknown feature " + quoted(f));
      if (isa_arch(isa) != p.arch)
        spec_error(spec, "feature " + quoted(f) + " is not an " + arch_name(p.arch) + " feature");
      p.isa.add(isa);
    }
  }
  p.isa = isa_with_prerequisites(p.isa);

  bool have_cores = false, have_l1d = false, have_l2 = false, have_l3 = false;
  CacheSizes given;
  for (size_t i = 1; i < sections.size(); ++i) {
    std::string_view sec = sections[i];
    size_t eq = sec.find('=');
    if (eq == std::string_view::npos)
      spec_error(spec, "expected 'key=value', got " + quoted(sec));
    std::string_view key = trim(sec.substr(0, eq)), value = trim(sec.substr(eq + 1));
    if (key == "cores") {
      if (have_cores) spec_error(spec, "'cores' given twice");
      have_cores = true;
      if (value.empty()) spec_error(spec, "'cores=' lists no cores");
      for (std::string_view group : split(value, ',')) {
        // "<count>x<uarch>"; split at the first 'x' ("1xcortex-x3" -> "1", "cortex-x3").
        size_t x = group.find('x');
        int count = 0;
        auto [end, ec] = std::from_chars(group.data(), group.data() + (x == group.npos ? 0 : x),
                                         count);
        if (x == group.npos || x == 0 || ec != std::errc() || end != group.data() + x)
          spec_error(spec, "core group " + quoted(group) + " is not '<count>x<uarch>'");
        if (count <= 0 || count > kMaxSpecCores)
          spec_error(spec, "core count in " + quoted(group) + " must be in 1.." +
                               std::to_string(kMaxSpecCores));
        std::string_view name = group.substr(x + 1);
        Uarch u;
        if (!uarch_from_name(name, &u)) spec_error(spec, "unknown uarch " + quoted(name));
        if (!arch_matches(p.arch, uarch_arch(u)))
          spec_error(spec, "uarch " + quoted(name) + " is not an " + arch_name(p.arch) + " uarch");
        uint32_t index = 0;
        while (index < p.uarchs.size() && p.uarchs[index] != u) ++index;
        if (index == p.uarchs.size()) p.uarchs.push_back(u);
        uint32_t cluster = p.cores.empty() ? 0 : p.cores.back().cluster + 1;
        for (int c = 0; c < count; ++c) p.cores.push_back(CoreInfo{u, cluster, index});
      }
    } else if (key == "l1d" || key == "l2" || key == "l3") {
      bool& seen = key == "l1d" ? have_l1d : key == "l2" ? have_l2 : have_l3;
      size_t& out = key == "l1d" ? given.l1d : key == "l2" ? given.l2 : given.l3;
      if (seen) spec_error(spec, quoted(key) + " given twice");
      seen = true;
      try {
        out = parse_cache_size(key, value);
      } catch (const std::invalid_argument& e) {
        spec_error(spec, e.what());
      }
      if (out == 0 && key != "l3") spec_error(spec, quoted(key) + " must be positive");
    } else {
      spec_error(spec, "unknown key " + quoted(key) + " (expected cores, l1d, l2 or l3)");
    }
  }
  if (!have_cores) spec_error(spec, "missing 'cores=<count>x<uarch>,...'");

  p.caches = default_caches(p.main_uarch(), p.arch);
  if (have_l1d) p.caches.l1d = given.l1d;
  if (have_l2) p.caches.l2 = given.l2;
  if (have_l3) p.caches.l3 = given.l3;
  return p;
}

IsaSet isa_cap(Arch arch, std::string_view cap) {
  auto fail = [&](std::string_view word) -> IsaSet {
    throw std::invalid_argument(
        "ISA cap " + quoted(cap) + ": " + quoted(word) + " is not an " + arch_name(arch) +
        " tier or feature (expected native, scalar, a tier such as avx2 / dotprod, or "
        "features joined with '+')");
  };
  IsaSet out;
  for (std::string_view word : split(cap, '+')) {
    if (word == "native") {
      out = out | isa_features(arch);
      continue;
    }
    if (word == "scalar") continue;
    bool found = false;
    for (const Tier& t : kTiers) {
      if (word == t.name && arch_matches(arch, t.arch)) {
        out = out | t.isa;
        found = true;
      }
    }
    Isa f;
    if (!found && isa_from_name(word, &f) && arch_matches(arch, isa_arch(f))) {
      out = out | isa_with_prerequisites(IsaSet{f});
      found = true;
    }
    if (!found) fail(word);
  }
  return out;
}

CpuProfile apply_isa_cap(CpuProfile p, std::string_view cap) {
  // The profile's own set may be inconsistent (a hypervisor hiding avx2 but not avxvnni):
  // never leave a feature without its prerequisites.
  p.isa = isa_drop_unmet(p.isa & isa_cap(p.arch, cap));
  return p;
}

const CpuProfile& host_profile() {
  // Initialised once; if the environment is malformed the exception propagates and the next
  // call tries again (and throws again).
  static const CpuProfile profile = [] {
    CpuProfile p = detect_host_profile();
    if (const char* cap = std::getenv("LOWBIT_ISA"); cap != nullptr && *cap != '\0') {
      try {
        p = apply_isa_cap(std::move(p), cap);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(std::string("LOWBIT_ISA=") + quoted(cap) + ": " + e.what());
      }
    }
    cache_override("LOWBIT_L1D", &p.caches.l1d, false);
    cache_override("LOWBIT_L2", &p.caches.l2, false);
    cache_override("LOWBIT_L3", &p.caches.l3, true);
    return p;
  }();
  return profile;
}

}  // namespace lowbit

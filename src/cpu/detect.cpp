// Host detection: cpuinfo first, plus a small supplement (CPUID on x86-64, getauxval on
// AArch64) for what the Debian cpuinfo (git 2022-06-17) does not know: AVX-VNNI, AMX, Arm
// i8mm / SME, and uarchs newer than mid-2022 (Zen 4/5, Intel hybrid, Cortex-A510/A715/X3, ...).
#include <cpuinfo.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "cpu/cpu_id.h"
#include "cpu/profile.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <sys/syscall.h>
#elif defined(__aarch64__)
#include <sys/auxv.h>
#endif

namespace lowbit {
namespace {

#if defined(__x86_64__)

struct Regs {
  uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
};

Regs cpuid(uint32_t leaf, uint32_t subleaf) {
  Regs r;
  if (!__get_cpuid_count(leaf, subleaf, &r.eax, &r.ebx, &r.ecx, &r.edx)) return Regs{};
  return r;
}

bool bit(uint32_t reg, int b) { return ((reg >> b) & 1) != 0; }

uint64_t xgetbv0() {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));  // no -mxsave needed
  return (uint64_t{hi} << 32) | lo;
}

// Linux (5.16+) grants AMX tile data only to processes that ask; without it TILELOADD faults.
bool request_amx_permission() {
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
}

IsaSet supplement_isa() {
  const Regs l1 = cpuid(1, 0), l7 = cpuid(7, 0);
  const Regs l7s1 = l7.eax >= 1 ? cpuid(7, 1) : Regs{};
  // CPUID says what the CPU has; XCR0 says which register state the OS saves on a context
  // switch. AVX needs XMM|YMM (bits 1,2), AVX-512 also opmask|ZMM (5,6,7), AMX tiles (17,18).
  const uint64_t xcr0 = bit(l1.ecx, 27) ? xgetbv0() : 0;  // 27 = OSXSAVE
  const bool ymm = (xcr0 & 0x6) == 0x6;
  const bool zmm = ymm && (xcr0 & 0xE0) == 0xE0;
  const bool tiles = (xcr0 & 0x60000) == 0x60000;

  IsaSet s;
  if (bit(l1.ecx, 19)) s.add(Isa::sse41);
  if (bit(l7.ecx, 8)) s.add(Isa::gfni);  // the SSE encoding needs no extra OS state
  if (ymm) {
    if (bit(l1.ecx, 28)) s.add(Isa::avx);
    if (bit(l1.ecx, 12)) s.add(Isa::fma);
    if (bit(l1.ecx, 29)) s.add(Isa::f16c);
    if (bit(l7.ebx, 5)) s.add(Isa::avx2);
    if (bit(l7s1.eax, 4)) s.add(Isa::avxvnni);
  }
  if (zmm) {
    if (bit(l7.ebx, 16)) s.add(Isa::avx512f);
    if (bit(l7.ebx, 17)) s.add(Isa::avx512dq);
    if (bit(l7.ebx, 30)) s.add(Isa::avx512bw);
    if (bit(l7.ebx, 31)) s.add(Isa::avx512vl);
    if (bit(l7.ecx, 1)) s.add(Isa::avx512vbmi);
    if (bit(l7.ecx, 11)) s.add(Isa::avx512vnni);
    if (bit(l7.ecx, 14)) s.add(Isa::avx512vpopcntdq);
    if (bit(l7s1.eax, 5)) s.add(Isa::avx512bf16);
  }
  if (tiles && bit(l7.edx, 24) && request_amx_permission()) {
    s.add(Isa::amx_tile);
    if (bit(l7.edx, 25)) s.add(Isa::amx_int8);
  }
  return s;
}

IsaSet cpuinfo_isa() {
  IsaSet s;
  if (cpuinfo_has_x86_sse4_1()) s.add(Isa::sse41);
  if (cpuinfo_has_x86_avx()) s.add(Isa::avx);
  if (cpuinfo_has_x86_avx2()) s.add(Isa::avx2);
  if (cpuinfo_has_x86_fma3()) s.add(Isa::fma);
  if (cpuinfo_has_x86_f16c()) s.add(Isa::f16c);
  if (cpuinfo_has_x86_gfni()) s.add(Isa::gfni);
  return s;
}

// Vendor, family and model from CPUID leaves 0 and 1, decoded as both vendors document.
struct FamilyModel {
  enum Vendor { other, intel, amd, hygon } vendor = other;
  uint32_t family = 0, model = 0;
  bool hybrid = false;  // Intel P + E cores (CPUID.7.0:EDX[15])
};

FamilyModel family_model() {
  FamilyModel fm;
  const uint32_t vendor = cpuid(0, 0).ebx;  // first 4 characters of the vendor string
  fm.vendor = vendor == 0x756e6547   ? FamilyModel::intel   // "Genu"ineIntel
              : vendor == 0x68747541 ? FamilyModel::amd     // "Auth"enticAMD
              : vendor == 0x6f677948 ? FamilyModel::hygon   // "Hygo"nGenuine
                                     : FamilyModel::other;
  const uint32_t eax = cpuid(1, 0).eax;
  fm.family = (eax >> 8) & 0xF;
  fm.model = (eax >> 4) & 0xF;
  if (fm.family == 0x6 || fm.family == 0xF) fm.model |= ((eax >> 16) & 0xF) << 4;
  if (fm.family == 0xF) fm.family += (eax >> 20) & 0xFF;
  fm.hybrid = bit(cpuid(7, 0).edx, 15);
  return fm;
}

// Table first: the 2022 cpuinfo calls every family-19h part zen3 and knows no hybrid part.
Uarch uarch_from_family_model(const FamilyModel& fm) {
  const uint32_t m = fm.model;
  if (fm.vendor == FamilyModel::amd) {
    switch (fm.family) {
      case 0x17: return m < 0x30 ? Uarch::zen : Uarch::zen2;
      case 0x19:  // Zen 4: Genoa 1xh, Raphael/Phoenix 6xh-7xh, Bergamo/Siena Axh; else Zen 3
        return (m >= 0x10 && m <= 0x1F) || (m >= 0x60 && m <= 0x7F) || (m >= 0xA0 && m <= 0xAF)
                   ? Uarch::zen4
                   : Uarch::zen3;
      case 0x1A: return Uarch::zen5;
      default: return Uarch::unknown;
    }
  }
  if (fm.vendor == FamilyModel::hygon) return fm.family == 0x18 ? Uarch::zen : Uarch::unknown;
  if (fm.vendor != FamilyModel::intel || fm.family != 6) return Uarch::unknown;
  switch (m) {
    case 0x3C: case 0x3F: case 0x45: case 0x46:             // Haswell
    case 0x3D: case 0x47: case 0x4F: case 0x56:             // Broadwell
      return Uarch::haswell;
    case 0x4E: case 0x5E: case 0x8E: case 0x9E: case 0xA5: case 0xA6:  // Skylake..Comet Lake
      return Uarch::skylake;
    case 0x55: return Uarch::skylake_x;                     // also Cascade / Cooper Lake
    case 0x6A: case 0x6C: case 0x7D: case 0x7E:             // Ice Lake
    case 0xA7:                                              // Rocket Lake: the same core (Cypress Cove)
      return Uarch::icelake;
    case 0x8C: case 0x8D: return Uarch::tigerlake;
    case 0x8F: return Uarch::sapphirerapids;
    case 0xCF: return Uarch::emeraldrapids;
    case 0xAD: case 0xAE: return Uarch::graniterapids;
    case 0x97: case 0x9A: return Uarch::alderlake_p;
    case 0xBE: return Uarch::alderlake_e;                   // Alder Lake-N: E-cores only
    case 0xB7: case 0xBA: case 0xBF: return Uarch::raptorlake_p;
    case 0xAA: case 0xAC: return Uarch::meteorlake_p;
    default: return Uarch::unknown;
  }
}

Uarch from_cpuinfo_uarch(cpuinfo_uarch u) {
  switch (u) {
    case cpuinfo_uarch_haswell: case cpuinfo_uarch_broadwell: return Uarch::haswell;
    case cpuinfo_uarch_sky_lake: return Uarch::skylake;  // = kaby_lake
    case cpuinfo_uarch_sunny_cove: return Uarch::icelake;
    case cpuinfo_uarch_zen: case cpuinfo_uarch_dhyana: return Uarch::zen;
    case cpuinfo_uarch_zen2: return Uarch::zen2;
    case cpuinfo_uarch_zen3: return Uarch::zen3;
    default: return Uarch::unknown;
  }
}

// Linux lists the CPUs of each hybrid core type in /sys/devices/cpu_{core,atom}/cpus.
std::vector<bool> read_cpu_list(const char* path) {
  std::vector<bool> set;
  std::ifstream in(path);
  std::string range;
  while (std::getline(in, range, ',')) {  // "0-15,24"
    try {
      size_t dash = range.find('-');
      unsigned long lo = std::stoul(range), hi = dash == std::string::npos ? lo
                                                : std::stoul(range.substr(dash + 1));
      if (hi >= 65536 || lo > hi) return {};
      if (set.size() <= hi) set.resize(hi + 1);
      for (unsigned long c = lo; c <= hi; ++c) set[c] = true;
    } catch (const std::exception&) {
      return {};
    }
  }
  return set;
}

Uarch efficiency_variant(Uarch u) {
  switch (u) {
    case Uarch::alderlake_p: case Uarch::raptorlake_p: return Uarch::alderlake_e;  // Gracemont
    case Uarch::meteorlake_p: return Uarch::meteorlake_e;
    default: return u;
  }
}

// Per-processor uarch; `linux_id` selects P or E on hybrid parts.
Uarch processor_uarch(int linux_id, cpuinfo_uarch from_cpuinfo) {
  static const FamilyModel fm = family_model();
  Uarch u = uarch_from_family_model(fm);
  if (u == Uarch::unknown) u = from_cpuinfo_uarch(from_cpuinfo);
  if (fm.hybrid) {
    static const std::vector<bool> atom = read_cpu_list("/sys/devices/cpu_atom/cpus");
    if (linux_id >= 0 && static_cast<size_t>(linux_id) < atom.size() && atom[linux_id])
      u = efficiency_variant(u);
  }
  return u;
}

Uarch uarch_info_uarch(const cpuinfo_uarch_info& info) {
  return processor_uarch(-1, info.uarch);
}

Uarch core_uarch(const cpuinfo_processor& p) { return processor_uarch(p.linux_id, p.core->uarch); }

constexpr const char* kSource = "cpuinfo+cpuid";

CpuId read_cpu_id() {
  CpuId id;
  const Regs l0 = cpuid(0, 0);
  const uint32_t words[3] = {l0.ebx, l0.edx, l0.ecx};
  for (uint32_t w : words)
    for (int b = 0; b < 4; ++b)
      if (const char c = char(w >> (8 * b)); c >= 0x20 && c < 0x7F) id.vendor += c;
  const FamilyModel fm = family_model();
  id.family = fm.family;
  id.model = fm.model;
  id.stepping = cpuid(1, 0).eax & 0xF;
  return id;
}

#elif defined(__aarch64__)

#ifndef AT_HWCAP2
#define AT_HWCAP2 26
#endif
// Linux <asm/hwcap.h> bits, spelled out because older headers lack some.
constexpr unsigned long kHwcapAsimdhp = 1ul << 10, kHwcapAsimddp = 1ul << 20,
                        kHwcapSve = 1ul << 22;
constexpr unsigned long kHwcap2Sve2 = 1ul << 1, kHwcap2I8mm = 1ul << 13,
                        kHwcap2Bf16 = 1ul << 14, kHwcap2Sme = 1ul << 23;

IsaSet supplement_isa() {
  const unsigned long h1 = getauxval(AT_HWCAP), h2 = getauxval(AT_HWCAP2);
  IsaSet s{Isa::neon};  // Advanced SIMD is part of the armv8-a baseline
  if (h1 & kHwcapAsimddp) s.add(Isa::dotprod);
  if (h1 & kHwcapAsimdhp) s.add(Isa::fp16);
  if (h1 & kHwcapSve) s.add(Isa::sve);
  if (h2 & kHwcap2Sve2) s.add(Isa::sve2);
  if (h2 & kHwcap2I8mm) s.add(Isa::i8mm);
  if (h2 & kHwcap2Bf16) s.add(Isa::bf16);
  if (h2 & kHwcap2Sme) s.add(Isa::sme);
  return s;
}

IsaSet cpuinfo_isa() {
  IsaSet s;
  if (cpuinfo_has_arm_neon()) s.add(Isa::neon);
  if (cpuinfo_has_arm_neon_dot()) s.add(Isa::dotprod);
  if (cpuinfo_has_arm_neon_fp16_arith()) s.add(Isa::fp16);
  if (cpuinfo_has_arm_bf16()) s.add(Isa::bf16);
  if (cpuinfo_has_arm_sve()) s.add(Isa::sve);
  if (cpuinfo_has_arm_sve2()) s.add(Isa::sve2);
  return s;
}

// MIDR_EL1 implementer and part number; covers the parts newer than the 2022 cpuinfo.
Uarch uarch_from_midr(uint32_t midr) {
  const uint32_t implementer = midr >> 24, part = (midr >> 4) & 0xFFF;
  if (implementer == 0x41) {  // Arm
    switch (part) {
      case 0xD03: return Uarch::cortex_a53;
      case 0xD05: return Uarch::cortex_a55;
      case 0xD07: return Uarch::cortex_a57;
      case 0xD08: return Uarch::cortex_a72;
      case 0xD09: return Uarch::cortex_a73;
      case 0xD0A: return Uarch::cortex_a75;
      case 0xD0B: case 0xD0E: return Uarch::cortex_a76;  // A76, A76AE
      case 0xD0C: return Uarch::neoverse_n1;
      case 0xD0D: return Uarch::cortex_a77;
      case 0xD40: return Uarch::neoverse_v1;
      case 0xD41: case 0xD4B: return Uarch::cortex_a78;  // A78, A78C
      case 0xD44: return Uarch::cortex_x1;
      case 0xD46: return Uarch::cortex_a510;
      case 0xD47: return Uarch::cortex_a710;
      case 0xD48: return Uarch::cortex_x2;
      case 0xD49: return Uarch::neoverse_n2;
      case 0xD4D: return Uarch::cortex_a715;
      case 0xD4E: return Uarch::cortex_x3;
      case 0xD4F: return Uarch::neoverse_v2;
      case 0xD80: return Uarch::cortex_a520;
      case 0xD81: return Uarch::cortex_a720;
      case 0xD82: return Uarch::cortex_x4;
      default: return Uarch::unknown;
    }
  }
  if (implementer == 0x61) {  // Apple: M1 family 0x22-0x29, M2 family 0x32-0x39
    if (part >= 0x22 && part <= 0x29) return Uarch::apple_m1;
    if (part >= 0x32 && part <= 0x39) return Uarch::apple_m2;
  }
  return Uarch::unknown;
}

Uarch from_cpuinfo_uarch(cpuinfo_uarch u) {
  switch (u) {
    case cpuinfo_uarch_cortex_a53: return Uarch::cortex_a53;
    case cpuinfo_uarch_cortex_a55r0: case cpuinfo_uarch_cortex_a55: return Uarch::cortex_a55;
    case cpuinfo_uarch_cortex_a57: return Uarch::cortex_a57;
    case cpuinfo_uarch_cortex_a72: return Uarch::cortex_a72;
    case cpuinfo_uarch_cortex_a73: return Uarch::cortex_a73;
    case cpuinfo_uarch_cortex_a75: return Uarch::cortex_a75;
    case cpuinfo_uarch_cortex_a76: return Uarch::cortex_a76;  // = cortex_a76ae
    case cpuinfo_uarch_cortex_a77: return Uarch::cortex_a77;
    case cpuinfo_uarch_cortex_a78: return Uarch::cortex_a78;
    case cpuinfo_uarch_cortex_x1: return Uarch::cortex_x1;
    case cpuinfo_uarch_neoverse_n1: return Uarch::neoverse_n1;
    case cpuinfo_uarch_neoverse_v1: return Uarch::neoverse_v1;
    case cpuinfo_uarch_neoverse_n2: return Uarch::neoverse_n2;
    case cpuinfo_uarch_firestorm: case cpuinfo_uarch_icestorm: return Uarch::apple_m1;
    default: return Uarch::unknown;
  }
}

Uarch from_midr_or_cpuinfo(uint32_t midr, cpuinfo_uarch u) {
  Uarch v = uarch_from_midr(midr);
  return v != Uarch::unknown ? v : from_cpuinfo_uarch(u);
}

Uarch processor_uarch(int /*linux_id*/, cpuinfo_uarch /*from_cpuinfo*/) {
  return Uarch::unknown;  // without cpuinfo there is no MIDR to read portably
}

Uarch uarch_info_uarch(const cpuinfo_uarch_info& info) {
  return from_midr_or_cpuinfo(info.midr, info.uarch);
}

Uarch core_uarch(const cpuinfo_processor& p) {
  return from_midr_or_cpuinfo(p.core->midr, p.core->uarch);
}

constexpr const char* kSource = "cpuinfo+hwcap";

CpuId read_cpu_id() {
  CpuId id;
  if (!cpuinfo_initialize() || cpuinfo_get_cores_count() == 0) return id;
  // A core of the most common uarch (the big cores of a phone are fewer than the little ones).
  const uint32_t n = cpuinfo_get_cores_count();
  uint32_t best = 0, best_count = 0;
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t count = 0;
    for (uint32_t j = 0; j < n; ++j) count += cpuinfo_get_core(j)->midr == cpuinfo_get_core(i)->midr;
    if (count > best_count) {
      best = i;
      best_count = count;
    }
  }
  id.midr = cpuinfo_get_core(best)->midr;
  char buf[32];
  std::snprintf(buf, sizeof buf, "arm:0x%02x", unsigned(id.midr >> 24) & 0xFF);
  id.vendor = buf;
  return id;
}

#else  // another architecture: cpuinfo alone

IsaSet supplement_isa() { return {}; }
IsaSet cpuinfo_isa() { return {}; }
Uarch processor_uarch(int, cpuinfo_uarch) { return Uarch::unknown; }
Uarch uarch_info_uarch(const cpuinfo_uarch_info&) { return Uarch::unknown; }
Uarch core_uarch(const cpuinfo_processor&) { return Uarch::unknown; }
constexpr const char* kSource = "cpuinfo";
CpuId read_cpu_id() { return {}; }

#endif

// Index of `u` in p->uarchs, appending it if new.
uint32_t uarch_index(CpuProfile* p, Uarch u) {
  for (uint32_t i = 0; i < p->uarchs.size(); ++i)
    if (p->uarchs[i] == u) return i;
  p->uarchs.push_back(u);
  return static_cast<uint32_t>(p->uarchs.size() - 1);
}

// Physical cores among the processors sharing `c` (SMT siblings share a core's L1/L2).
uint32_t cores_sharing(const cpuinfo_cache& c) {
  uint32_t n = 0;
  const cpuinfo_core* last = nullptr;
  for (uint32_t i = c.processor_start; i < c.processor_start + c.processor_count; ++i) {
    const cpuinfo_processor* p = cpuinfo_get_processor(i);
    if (p != nullptr && p->core != last) {
      ++n;
      last = p->core;
    }
  }
  return n > 0 ? n : 1;
}

// Fills cores, uarchs and caches from cpuinfo.
void from_cpuinfo(CpuProfile* p) {
  // uarchs[0..n) mirror cpuinfo's uarch list, in its order, because current_core.cpp looks
  // a core up by cpuinfo's index. Cores that the supplement tells apart further
  // (Intel P/E, Arm parts the 2022 cpuinfo calls "unknown") get extra entries after those.
  // cpuinfo never reports those indices (current_core.cpp finds Intel E-cores via CPUID);
  // on Arm such cores run what was chosen for cpuinfo's entry, which is correct, just untuned.
  const uint32_t nu = cpuinfo_get_uarchs_count();
  for (uint32_t i = 0; i < nu; ++i) p->uarchs.push_back(uarch_info_uarch(*cpuinfo_get_uarch(i)));
  const cpuinfo_cluster* clusters = cpuinfo_get_clusters();
  const uint32_t np = cpuinfo_get_processors_count();
  for (uint32_t i = 0; i < np; ++i) {
    const cpuinfo_processor& proc = *cpuinfo_get_processor(i);
    CoreInfo c;
    c.uarch = core_uarch(proc);
    c.cluster = static_cast<uint32_t>(proc.cluster - clusters);
    c.uarch_index = nu;
    for (uint32_t j = 0; j < nu; ++j) {
      if (cpuinfo_get_uarch(j)->uarch == proc.core->uarch) {
        c.uarch_index = j;
        break;
      }
    }
    if (c.uarch_index >= nu || p->uarchs[c.uarch_index] != c.uarch)
      c.uarch_index = uarch_index(p, c.uarch);
    p->cores.push_back(c);
  }
  // Caches as seen by a core of the most common uarch.
  const Uarch main = p->main_uarch();
  uint32_t rep = 0;
  while (rep + 1 < np && p->cores[rep].uarch != main) ++rep;
  const auto& cache = cpuinfo_get_processor(rep)->cache;
  if (cache.l1d != nullptr) p->caches.l1d = cache.l1d->size;
  if (cache.l2 != nullptr) p->caches.l2 = cache.l2->size / cores_sharing(*cache.l2);
  if (cache.l3 != nullptr) p->caches.l3 = cache.l3->size;
  p->caches = sanitize_caches(p->caches, main, p->arch);
}

}  // namespace

CpuId host_cpu_id() {
  static const CpuId id = read_cpu_id();
  return id;
}

CpuProfile detect_host_profile() {
  CpuProfile p;
  p.arch = kBuildArch;
  const bool have_cpuinfo = cpuinfo_initialize() && cpuinfo_get_processors_count() > 0 &&
                            cpuinfo_get_uarchs_count() > 0;
  // Both read the same CPUID/XGETBV or HWCAP bits; the union only matters if one misses one.
  p.isa = supplement_isa();
  if (have_cpuinfo) p.isa = p.isa | cpuinfo_isa();
  p.isa = isa_drop_unmet(p.isa);

  if (have_cpuinfo) {
    from_cpuinfo(&p);
    p.source = kSource;
  } else {
    // cpuinfo can fail under emulators: one cluster of online processors, default caches.
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    for (long i = 0; i < (n > 0 ? n : 1); ++i) {
      CoreInfo c;
      c.uarch = processor_uarch(static_cast<int>(i), cpuinfo_uarch_unknown);
      c.uarch_index = uarch_index(&p, c.uarch);
      p.cores.push_back(c);
    }
    p.caches = default_caches(p.main_uarch(), p.arch);
    p.source = "supplement";
  }
  return p;
}

}  // namespace lowbit

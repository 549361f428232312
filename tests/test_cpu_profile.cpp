#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cpu/isa.h"
#include "cpu/profile.h"

namespace lowbit {
namespace {

constexpr size_t K = 1024, M = 1024 * 1024;

// Expects `f` to throw std::invalid_argument whose message contains every `needle`.
template <typename F>
void expect_invalid(F f, std::initializer_list<std::string> needles) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one mentioning '" << *needles.begin() << "'";
  } catch (const std::invalid_argument& e) {
    for (const std::string& n : needles)
      EXPECT_NE(std::string(e.what()).find(n), std::string::npos)
          << "message \"" << e.what() << "\" lacks '" << n << "'";
  }
}

void expect_same(const CpuProfile& a, const CpuProfile& b) {
  EXPECT_EQ(a.arch, b.arch);
  EXPECT_EQ(a.isa, b.isa) << a.isa.to_string() << " vs " << b.isa.to_string();
  ASSERT_EQ(a.cores.size(), b.cores.size());
  for (size_t i = 0; i < a.cores.size(); ++i) {
    EXPECT_EQ(a.cores[i].uarch, b.cores[i].uarch) << "core " << i;
    EXPECT_EQ(a.cores[i].cluster, b.cores[i].cluster) << "core " << i;
    EXPECT_EQ(a.cores[i].uarch_index, b.cores[i].uarch_index) << "core " << i;
  }
  EXPECT_EQ(a.uarchs, b.uarchs);
  EXPECT_EQ(a.caches.l1d, b.caches.l1d);
  EXPECT_EQ(a.caches.l2, b.caches.l2);
  EXPECT_EQ(a.caches.l3, b.caches.l3);
}

void expect_consistent(const CpuProfile& p) {
  ASSERT_FALSE(p.uarchs.empty());
  for (const CoreInfo& c : p.cores) {
    ASSERT_LT(c.uarch_index, p.uarchs.size());
    EXPECT_EQ(p.uarchs[c.uarch_index], c.uarch);
  }
  EXPECT_EQ(p.isa, isa_drop_unmet(p.isa)) << p.isa.to_string();
}

TEST(Isa, NameRoundTrip) {
  std::set<std::string> seen;
  for (int i = 0; i < kIsaCount; ++i) {
    const Isa isa = static_cast<Isa>(i);
    const std::string name = isa_name(isa);
    EXPECT_TRUE(seen.insert(name).second) << name;
    for (char c : name) EXPECT_FALSE(c >= 'A' && c <= 'Z') << name;
    Isa back;
    ASSERT_TRUE(isa_from_name(name, &back)) << name;
    EXPECT_EQ(back, isa);
  }
  Isa dummy;
  EXPECT_FALSE(isa_from_name("avx3", &dummy));
  EXPECT_FALSE(isa_from_name("AVX2", &dummy));
  EXPECT_FALSE(isa_from_name("", &dummy));
  EXPECT_STREQ(isa_name(Isa::amx_int8), "amx_int8");
  EXPECT_STREQ(isa_name(Isa::avx512vnni), "avx512vnni");
}

TEST(Isa, SetToString) {
  EXPECT_EQ(IsaSet{}.to_string(), "none");
  EXPECT_EQ((IsaSet{Isa::avx512vnni, Isa::avx2, Isa::fma}).to_string(), "avx2+fma+avx512vnni");
  EXPECT_EQ((IsaSet{Isa::neon, Isa::i8mm}).to_string(), "neon+i8mm");
  EXPECT_STREQ(arch_name(Arch::x86_64), "x86_64");
  EXPECT_STREQ(arch_name(Arch::arm64), "arm64");
  EXPECT_STREQ(arch_name(Arch::unknown), "unknown");
}

TEST(Isa, ArchOfFeatures) {
  EXPECT_EQ(isa_arch(Isa::sse41), Arch::x86_64);
  EXPECT_EQ(isa_arch(Isa::amx_int8), Arch::x86_64);
  EXPECT_EQ(isa_arch(Isa::neon), Arch::arm64);
  EXPECT_EQ(isa_arch(Isa::sme), Arch::arm64);
  const IsaSet x86 = isa_features(Arch::x86_64), arm = isa_features(Arch::arm64);
  EXPECT_TRUE((x86 & arm).empty());
  EXPECT_EQ(x86 | arm, isa_features(Arch::unknown));
  EXPECT_TRUE(x86.has(Isa::avxvnni));
  EXPECT_TRUE(arm.has(Isa::sve2));
}

TEST(Isa, Prerequisites) {
  EXPECT_EQ(isa_with_prerequisites({Isa::avx2}), (IsaSet{Isa::sse41, Isa::avx, Isa::avx2}));
  const IsaSet v = isa_with_prerequisites({Isa::avx512vnni});
  EXPECT_TRUE(v.contains({Isa::avx512f, Isa::avx2, Isa::fma, Isa::f16c, Isa::avx, Isa::sse41}));
  EXPECT_FALSE(v.has(Isa::avx512bw));
  EXPECT_EQ(isa_with_prerequisites({Isa::i8mm}), (IsaSet{Isa::neon, Isa::dotprod, Isa::i8mm}));
  EXPECT_EQ(isa_with_prerequisites({Isa::sve2}), (IsaSet{Isa::neon, Isa::sve, Isa::sve2}));
  EXPECT_EQ(isa_with_prerequisites({Isa::sme}), (IsaSet{Isa::neon, Isa::sme}));

  EXPECT_TRUE(isa_drop_unmet({Isa::avxvnni}).empty());
  EXPECT_EQ(isa_drop_unmet({Isa::sse41, Isa::avx, Isa::avxvnni, Isa::avx512f}),
            (IsaSet{Isa::sse41, Isa::avx}));
  EXPECT_EQ(isa_drop_unmet({Isa::neon, Isa::i8mm}), IsaSet{Isa::neon});
  EXPECT_TRUE(isa_drop_unmet({Isa::dotprod, Isa::i8mm}).empty());  // chains collapse fully
  const IsaSet full = isa_with_prerequisites(isa_features(Arch::unknown));
  EXPECT_EQ(isa_drop_unmet(full), full);
}

TEST(Uarch, NameRoundTrip) {
  std::set<std::string> seen;
  for (int i = 0; i < static_cast<int>(Uarch::count_); ++i) {
    const Uarch u = static_cast<Uarch>(i);
    const std::string name = uarch_name(u);
    EXPECT_TRUE(seen.insert(name).second) << name;
    Uarch back;
    ASSERT_TRUE(uarch_from_name(name, &back)) << name;
    EXPECT_EQ(back, u);
  }
  EXPECT_STREQ(uarch_name(Uarch::zen5), "zen5");
  EXPECT_STREQ(uarch_name(Uarch::cortex_a76), "cortex-a76");
  EXPECT_STREQ(uarch_name(Uarch::neoverse_n2), "neoverse-n2");
  EXPECT_STREQ(uarch_name(Uarch::apple_m2), "apple-m2");
  EXPECT_STREQ(uarch_name(Uarch::alderlake_p), "alderlake-p");
  Uarch dummy;
  EXPECT_FALSE(uarch_from_name("zen9", &dummy));
  EXPECT_EQ(uarch_arch(Uarch::zen4), Arch::x86_64);
  EXPECT_EQ(uarch_arch(Uarch::cortex_x3), Arch::arm64);
  EXPECT_EQ(uarch_arch(Uarch::unknown), Arch::unknown);
}

TEST(Spec, ArmPhone) {
  const CpuProfile p =
      parse_profile_spec("arm64:neon,dotprod,i8mm;cores=4xcortex-a510,3xcortex-a715,1xcortex-x3");
  EXPECT_EQ(p.arch, Arch::arm64);
  EXPECT_EQ(p.isa, (IsaSet{Isa::neon, Isa::dotprod, Isa::i8mm}));
  EXPECT_EQ(p.source, "spec");
  ASSERT_EQ(p.num_threads(), 8u);
  EXPECT_TRUE(p.heterogeneous());
  EXPECT_EQ(p.uarchs, (std::vector<Uarch>{Uarch::cortex_a510, Uarch::cortex_a715, Uarch::cortex_x3}));
  std::set<uint32_t> clusters;
  for (const CoreInfo& c : p.cores) clusters.insert(c.cluster);
  EXPECT_EQ(clusters, (std::set<uint32_t>{0, 1, 2}));
  const uint32_t want_cluster[8] = {0, 0, 0, 0, 1, 1, 1, 2};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(p.cores[i].cluster, want_cluster[i]) << i;
  expect_consistent(p);
  EXPECT_EQ(p.cores[0].uarch, Uarch::cortex_a510);
  EXPECT_EQ(p.cores[7].uarch, Uarch::cortex_x3);
  EXPECT_EQ(p.cores[7].uarch_index, 2u);
  // Caches default to those of the most common uarch.
  EXPECT_EQ(p.main_uarch(), Uarch::cortex_a510);
  const CacheSizes d = default_caches(Uarch::cortex_a510, Arch::arm64);
  EXPECT_EQ(p.caches.l1d, d.l1d);
  EXPECT_EQ(p.caches.l2, d.l2);
  EXPECT_EQ(p.caches.l3, d.l3);
}

TEST(Spec, ArmNeonImpliedAndSameUarchClusters) {
  const CpuProfile p = parse_profile_spec("aarch64:;cores=4xcortex-a55,4xcortex-a55;l3=0");
  EXPECT_EQ(p.arch, Arch::arm64);
  EXPECT_EQ(p.isa, IsaSet{Isa::neon});
  EXPECT_EQ(p.uarchs, std::vector<Uarch>{Uarch::cortex_a55});
  EXPECT_FALSE(p.heterogeneous());
  EXPECT_EQ(p.cores[3].cluster, 0u);
  EXPECT_EQ(p.cores[4].cluster, 1u);
  EXPECT_EQ(p.caches.l3, 0u);
  EXPECT_EQ(parse_profile_spec("arm64:sve2;cores=1xneoverse-n2").isa,
            (IsaSet{Isa::neon, Isa::sve, Isa::sve2}));
}

TEST(Spec, X86) {
  CpuProfile p = parse_profile_spec("x86_64:avx2,fma;cores=8xzen3");
  EXPECT_EQ(p.arch, Arch::x86_64);
  EXPECT_EQ(p.isa, (IsaSet{Isa::sse41, Isa::avx, Isa::avx2, Isa::fma}));  // + prerequisites
  EXPECT_EQ(p.num_threads(), 8u);
  EXPECT_FALSE(p.heterogeneous());
  expect_consistent(p);

  p = parse_profile_spec(
      " x86_64 : avx512vnni , avxvnni , avx512bw ; cores = 16xsapphirerapids ; l1d=48K;l2=2M;"
      "l3=105M");
  EXPECT_TRUE(p.isa.contains({Isa::avx512vnni, Isa::avx512bw, Isa::avx512f, Isa::avxvnni,
                              Isa::avx2, Isa::fma, Isa::f16c}));
  EXPECT_FALSE(p.isa.has(Isa::avx512vl));
  EXPECT_EQ(p.caches.l1d, 48 * K);
  EXPECT_EQ(p.caches.l2, 2 * M);
  EXPECT_EQ(p.caches.l3, 105 * M);

  p = parse_profile_spec("x86_64:;cores=2xunknown");
  EXPECT_TRUE(p.isa.empty());
  EXPECT_EQ(p.uarchs, std::vector<Uarch>{Uarch::unknown});
  EXPECT_EQ(p.caches.l2, default_caches(Uarch::unknown, Arch::x86_64).l2);

  p = parse_profile_spec("x86_64:avx2;cores=8xalderlake-p,8xalderlake-e;l2=1280K");
  EXPECT_TRUE(p.heterogeneous());
  EXPECT_EQ(p.cores[8].uarch_index, 1u);
  EXPECT_EQ(p.caches.l2, 1280 * K);
  EXPECT_EQ(p.caches.l1d, 48 * K);  // tie -> first uarch (alderlake-p)
}

TEST(Spec, ToSpecRoundTrip) {
  const CpuProfile phone =
      parse_profile_spec("arm64:neon,dotprod,i8mm;cores=4xcortex-a510,3xcortex-a715,1xcortex-x3");
  EXPECT_EQ(phone.to_spec(),
            "arm64:neon,dotprod,i8mm;cores=4xcortex-a510,3xcortex-a715,1xcortex-x3;l1d=32K;"
            "l2=256K;l3=4M");
  for (const char* spec :
       {"arm64:neon,dotprod,i8mm;cores=4xcortex-a510,3xcortex-a715,1xcortex-x3",
        "arm64:;cores=4xcortex-a55,4xcortex-a55;l3=0",
        "arm64:bf16,fp16,sve2,sme;cores=64xneoverse-v2;l1d=64K;l2=2M;l3=114M",
        "x86_64:avx2,fma,f16c;cores=8xzen3;l2=1536",
        "x86_64:avx512vnni,avx512bw,avx512vl,avx512dq,gfni,amx_int8;cores=56xsapphirerapids",
        "x86_64:;cores=1xunknown"}) {
    SCOPED_TRACE(spec);
    const CpuProfile p = parse_profile_spec(spec);
    const CpuProfile q = parse_profile_spec(p.to_spec());
    expect_same(p, q);
    EXPECT_EQ(q.to_spec(), p.to_spec());
  }
}

TEST(Spec, Errors) {
  struct Case {
    const char* spec;
    const char* token;
  };
  for (const Case& c : std::initializer_list<Case>{
           {"x86_64:avx2,avx3;cores=1xzen3", "avx3"},
           {"x86_64:avx2,,fma;cores=1xzen3", "''"},
           {"x86_64:avx2;cores=1xzen9", "zen9"},
           {"arm64:neon;cores=0xcortex-a53", "0xcortex-a53"},
           {"arm64:neon;cores=-1xcortex-a53", "-1xcortex-a53"},
           {"arm64:neon;cores=99999xcortex-a53", "99999xcortex-a53"},
           {"arm64:neon;cores=4cortex-a53", "4cortex-a53"},
           {"arm64:neon;cores=xcortex-a53", "xcortex-a53"},
           {"arm64:neon;cores=", "cores"},
           {"arm64:neon;cores=2xcortex-a53,", "''"},
           {"arm64:neon", "cores"},
           {"garbage", "garbage"},
           {"", "''"},
           {"sparc:;cores=1xzen3", "sparc"},
           {"arm64:avx2;cores=1xcortex-a53", "avx2"},
           {"x86_64:neon;cores=1xzen3", "neon"},
           {"arm64:neon;cores=4xzen3", "zen3"},
           {"arm64:neon;cores=1xcortex-a53;l2=12Q", "12Q"},
           {"arm64:neon;cores=1xcortex-a53;l1d=0", "l1d"},
           {"arm64:neon;cores=1xcortex-a53;l3=1M;l3=2M", "l3"},
           {"arm64:neon;cores=1xcortex-a53;cores=1xcortex-a53", "cores"},
           {"arm64:neon;cores=1xcortex-a53;threads=4", "threads"},
           {"arm64:neon;cores=1xcortex-a53;", "''"},
       }) {
    SCOPED_TRACE(c.spec);
    expect_invalid([&] { parse_profile_spec(c.spec); }, {c.token, "profile spec"});
  }
}

// A synthetic AVX-512 machine (every x86 feature but AMX).
CpuProfile avx512_machine() {
  return parse_profile_spec(
      "x86_64:avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx512vbmi,avx512bf16,avxvnni,gfni;"
      "cores=4xsapphirerapids");
}

TEST(IsaCap, X86Tiers) {
  const CpuProfile p = avx512_machine();
  const IsaSet avx2{Isa::sse41, Isa::avx, Isa::avx2, Isa::fma, Isa::f16c};
  EXPECT_TRUE(apply_isa_cap(p, "scalar").isa.empty());
  EXPECT_EQ(apply_isa_cap(p, "sse41").isa, IsaSet{Isa::sse41});
  EXPECT_EQ(apply_isa_cap(p, "avx2").isa, avx2);
  EXPECT_EQ(apply_isa_cap(p, "avx2+avxvnni").isa, avx2 | IsaSet{Isa::avxvnni});
  EXPECT_EQ(apply_isa_cap(p, "avxvnni").isa, avx2 | IsaSet{Isa::avxvnni});
  const IsaSet avx512 = avx2 | IsaSet{Isa::avx512f, Isa::avx512bw, Isa::avx512vl, Isa::avx512dq};
  EXPECT_EQ(apply_isa_cap(p, "avx512").isa, avx512);
  EXPECT_EQ(apply_isa_cap(p, "avx512vnni").isa, p.isa);
  EXPECT_EQ(apply_isa_cap(p, "native").isa, p.isa);
  EXPECT_EQ(apply_isa_cap(p, "avx512+native").isa, p.isa);
  // A feature word brings its prerequisites along, never more.
  EXPECT_EQ(apply_isa_cap(p, "fma").isa, (IsaSet{Isa::sse41, Isa::avx, Isa::fma}));
  EXPECT_EQ(apply_isa_cap(p, "avx512bw").isa, (avx2 | IsaSet{Isa::avx512f, Isa::avx512bw}));
  // Everything else is kept.
  const CpuProfile q = apply_isa_cap(p, "scalar");
  EXPECT_EQ(q.cores.size(), p.cores.size());
  EXPECT_EQ(q.to_spec().substr(q.to_spec().find(';')), p.to_spec().substr(p.to_spec().find(';')));
  // A cap above what the machine has changes nothing.
  const CpuProfile zen3 = parse_profile_spec("x86_64:avx2,fma,f16c;cores=8xzen3");
  EXPECT_EQ(apply_isa_cap(zen3, "avx512vnni").isa, zen3.isa);
}

TEST(IsaCap, ArmTiers) {
  const CpuProfile p =
      parse_profile_spec("arm64:dotprod,i8mm,bf16,fp16,sve2,sme;cores=8xneoverse-v2");
  EXPECT_TRUE(apply_isa_cap(p, "scalar").isa.empty());
  EXPECT_EQ(apply_isa_cap(p, "neon").isa, IsaSet{Isa::neon});
  EXPECT_EQ(apply_isa_cap(p, "dotprod").isa, (IsaSet{Isa::neon, Isa::dotprod}));
  EXPECT_EQ(apply_isa_cap(p, "i8mm").isa, (IsaSet{Isa::neon, Isa::dotprod, Isa::i8mm}));
  EXPECT_EQ(apply_isa_cap(p, "sve").isa,
            (IsaSet{Isa::neon, Isa::dotprod, Isa::i8mm, Isa::sve, Isa::sve2}));
  EXPECT_EQ(apply_isa_cap(p, "dotprod+bf16").isa, (IsaSet{Isa::neon, Isa::dotprod, Isa::bf16}));
  EXPECT_EQ(apply_isa_cap(p, "native").isa, p.isa);
}

TEST(IsaCap, NeverLeavesOrphans) {
  // A hand-built (inconsistent) profile: avxvnni without avx2.
  CpuProfile p;
  p.arch = Arch::x86_64;
  p.isa = IsaSet{Isa::sse41, Isa::avxvnni};
  EXPECT_EQ(apply_isa_cap(p, "avx2+avxvnni").isa, IsaSet{Isa::sse41});
  EXPECT_EQ(apply_isa_cap(p, "native").isa, IsaSet{Isa::sse41});
}

TEST(IsaCap, Invalid) {
  const CpuProfile p = avx512_machine();
  expect_invalid([&] { apply_isa_cap(p, "avx3"); }, {"avx3"});
  expect_invalid([&] { apply_isa_cap(p, "avx2+bogus"); }, {"bogus", "avx2+bogus"});
  expect_invalid([&] { apply_isa_cap(p, "avx2+"); }, {"avx2+"});
  expect_invalid([&] { apply_isa_cap(p, ""); }, {"ISA cap"});
  expect_invalid([&] { apply_isa_cap(p, "neon"); }, {"neon", "x86_64"});
  expect_invalid([&] { isa_cap(Arch::arm64, "avx2"); }, {"avx2", "arm64"});
  expect_invalid([&] { isa_cap(Arch::x86_64, "AVX2"); }, {"AVX2"});
}

TEST(IsaCap, Sets) {
  EXPECT_TRUE(isa_cap(Arch::x86_64, "scalar").empty());
  EXPECT_EQ(isa_cap(Arch::x86_64, "native"), isa_features(Arch::x86_64));
  EXPECT_EQ(isa_cap(Arch::arm64, "native"), isa_features(Arch::arm64));
  EXPECT_EQ(isa_cap(Arch::x86_64, "avx2"),
            (IsaSet{Isa::sse41, Isa::avx, Isa::avx2, Isa::fma, Isa::f16c}));
  EXPECT_EQ(isa_cap(Arch::arm64, "i8mm"), (IsaSet{Isa::neon, Isa::dotprod, Isa::i8mm}));
  // Every tier is closed under prerequisites.
  for (const char* t : {"sse41", "avx2", "avxvnni", "avx512", "avx512vnni"}) {
    EXPECT_EQ(isa_cap(Arch::x86_64, t), isa_with_prerequisites(isa_cap(Arch::x86_64, t))) << t;
  }
  for (const char* t : {"neon", "dotprod", "i8mm", "sve"}) {
    EXPECT_EQ(isa_cap(Arch::arm64, t), isa_with_prerequisites(isa_cap(Arch::arm64, t))) << t;
  }
}

TEST(Caches, Defaults) {
  auto expect_caches = [](Uarch u, Arch a, size_t l1d, size_t l2, size_t l3) {
    const CacheSizes c = default_caches(u, a);
    EXPECT_EQ(c.l1d, l1d) << uarch_name(u);
    EXPECT_EQ(c.l2, l2) << uarch_name(u);
    EXPECT_EQ(c.l3, l3) << uarch_name(u);
  };
  expect_caches(Uarch::zen5, Arch::x86_64, 48 * K, 1 * M, 32 * M);
  expect_caches(Uarch::zen4, Arch::x86_64, 32 * K, 1 * M, 32 * M);
  expect_caches(Uarch::haswell, Arch::x86_64, 32 * K, 256 * K, 8 * M);
  expect_caches(Uarch::neoverse_n2, Arch::arm64, 64 * K, 1 * M, 32 * M);
  expect_caches(Uarch::unknown, Arch::x86_64, 32 * K, 1 * M, 16 * M);
  expect_caches(Uarch::unknown, Arch::arm64, 64 * K, 512 * K, 8 * M);
  // Every default survives sanitising unchanged.
  for (int i = 0; i < static_cast<int>(Uarch::count_); ++i) {
    const Uarch u = static_cast<Uarch>(i);
    for (Arch a : {Arch::x86_64, Arch::arm64, Arch::unknown}) {
      const CacheSizes d = default_caches(u, a), s = sanitize_caches(d, u, a);
      EXPECT_EQ(s.l1d, d.l1d) << uarch_name(u);
      EXPECT_EQ(s.l2, d.l2) << uarch_name(u);
      EXPECT_EQ(s.l3, d.l3) << uarch_name(u);
    }
  }
}

TEST(Caches, Sanitize) {
  // The development VMs: CPUID claims a ~508 MiB L3.
  CacheSizes c = sanitize_caches({48 * K, 1 * M, 508 * M}, Uarch::zen5, Arch::x86_64);
  EXPECT_EQ(c.l1d, 48 * K);
  EXPECT_EQ(c.l2, 1 * M);
  EXPECT_EQ(c.l3, 32 * M);
  // Nothing detected: defaults for l1d / l2, "no L3" is believed.
  c = sanitize_caches({}, Uarch::cortex_a76, Arch::arm64);
  EXPECT_EQ(c.l1d, 64 * K);
  EXPECT_EQ(c.l2, 512 * K);
  EXPECT_EQ(c.l3, 0u);
  c = sanitize_caches({4 * K, 64 * M, 256 * M}, Uarch::unknown, Arch::x86_64);
  EXPECT_EQ(c.l1d, 32 * K);
  EXPECT_EQ(c.l2, 1 * M);
  EXPECT_EQ(c.l3, 256 * M);
  c = sanitize_caches({8 * K, 128 * K, 2 * M}, Uarch::zen5, Arch::x86_64);  // bounds are inclusive
  EXPECT_EQ(c.l1d, 8 * K);
  EXPECT_EQ(c.l2, 128 * K);
}

TEST(Caches, ParseSize) {
  EXPECT_EQ(parse_cache_size("LOWBIT_L1D", "32768"), 32768u);
  EXPECT_EQ(parse_cache_size("LOWBIT_L1D", "32K"), 32 * K);
  EXPECT_EQ(parse_cache_size("LOWBIT_L1D", "48k"), 48 * K);
  EXPECT_EQ(parse_cache_size("LOWBIT_L1D", "48KiB"), 48 * K);
  EXPECT_EQ(parse_cache_size("LOWBIT_L2", "1M"), 1 * M);
  EXPECT_EQ(parse_cache_size("LOWBIT_L2", "2MB"), 2 * M);
  EXPECT_EQ(parse_cache_size("LOWBIT_L3", "1G"), 1024 * M);
  EXPECT_EQ(parse_cache_size("LOWBIT_L3", "0"), 0u);
  for (const char* bad : {"", "K", "12Q", "-1", "+1", "1.5M", " 1M", "1M ", "1MX", "1Mi",
                          "99999999999999999999", "18446744073709551615G"}) {
    SCOPED_TRACE(bad);
    expect_invalid([&] { parse_cache_size("LOWBIT_L2", bad); },
                   {"LOWBIT_L2", std::string("'") + bad + "'"});
  }
}

TEST(Caches, SizeToString) {
  EXPECT_EQ(cache_size_to_string(0), "0");
  EXPECT_EQ(cache_size_to_string(32 * K), "32K");
  EXPECT_EQ(cache_size_to_string(1280 * K), "1280K");
  EXPECT_EQ(cache_size_to_string(32 * M), "32M");
  EXPECT_EQ(cache_size_to_string(2048 * M), "2G");
  EXPECT_EQ(cache_size_to_string(1536), "1536");
  for (size_t v : {size_t{1}, 48 * K, 1280 * K, 3 * M + 1, 105 * M}) {
    EXPECT_EQ(parse_cache_size("x", cache_size_to_string(v)), v);
  }
}

void expect_sane_host(const CpuProfile& p, bool env_caches) {
  EXPECT_EQ(p.arch, kBuildArch);
  ASSERT_GE(p.num_threads(), 1u);
  EXPECT_FALSE(p.source.empty());
  expect_consistent(p);
  for (const CoreInfo& c : p.cores) {
    EXPECT_TRUE(c.uarch == Uarch::unknown || uarch_arch(c.uarch) == p.arch) << uarch_name(c.uarch);
  }
  EXPECT_TRUE(p.isa.missing_from(isa_features(p.arch)).empty()) << p.isa.to_string();
  if (p.arch == Arch::x86_64) {
    EXPECT_TRUE(!p.isa.has(Isa::avx512vnni) || p.isa.has(Isa::avx512f)) << p.isa.to_string();
    EXPECT_TRUE(!p.isa.has(Isa::avxvnni) || p.isa.has(Isa::avx2)) << p.isa.to_string();
  }
  auto unset = [&](const char* var) {
    const char* v = std::getenv(var);
    return !env_caches || v == nullptr || *v == '\0';
  };
  if (unset("LOWBIT_L1D")) {
    EXPECT_GE(p.caches.l1d, 8 * K);
    EXPECT_LE(p.caches.l1d, 256 * K);
  }
  if (unset("LOWBIT_L2")) {
    EXPECT_GE(p.caches.l2, 128 * K);
    EXPECT_LE(p.caches.l2, 16 * M);
  }
  if (unset("LOWBIT_L3")) {
    EXPECT_LE(p.caches.l3, 256 * M);
  }
}

TEST(Host, Detected) {
  const CpuProfile p = detect_host_profile();
  expect_sane_host(p, false);
  EXPECT_TRUE(p.arch != Arch::arm64 || p.isa.has(Isa::neon));
  // Detection is deterministic, and the profile round-trips through its spec.
  expect_same(p, detect_host_profile());
  const CpuProfile q = parse_profile_spec(p.to_spec());
  EXPECT_EQ(q.to_spec(), p.to_spec());
  EXPECT_EQ(q.isa, p.isa);
  EXPECT_EQ(q.num_threads(), p.num_threads());
}

TEST(Host, ProfileHonoursEnvironment) {
  const CpuProfile& p = host_profile();
  EXPECT_EQ(&p, &host_profile());  // one instance
  expect_sane_host(p, true);
  const CpuProfile d = detect_host_profile();
  EXPECT_TRUE(d.isa.contains(p.isa));
  EXPECT_EQ(p.num_threads(), d.num_threads());
  const char* cap = std::getenv("LOWBIT_ISA");
  if (cap != nullptr && *cap != '\0') {
    EXPECT_TRUE(isa_cap(p.arch, cap).contains(p.isa)) << cap;
  } else {
    EXPECT_EQ(p.isa, d.isa);
  }
}

// Under ctest every test runs in its own process, so this is host_profile()'s first call.
TEST(Host, ConcurrentFirstCall) {
  std::vector<const CpuProfile*> seen(8, nullptr);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < seen.size(); ++i)
    threads.emplace_back([&seen, i] { seen[i] = &host_profile(); });
  for (std::thread& t : threads) t.join();
  for (const CpuProfile* p : seen) EXPECT_EQ(p, seen[0]);
  EXPECT_GE(seen[0]->num_threads(), 1u);
}

}  // namespace
}  // namespace lowbit

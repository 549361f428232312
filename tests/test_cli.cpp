// The lowbit command: every subcommand's exit codes, JSON validity and stable keys.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "cpu/profile.h"
#include "registry/registry.h"
#include "select/tuning_record.h"
#include "test_util.h"

#ifndef LOWBIT_CLI
#error "LOWBIT_CLI must name the lowbit executable"
#endif

namespace {

struct Result {
  int status;
  std::string out;
};

Result run(const std::string& args, const std::string& env = "", bool with_stderr = false) {
  const std::string cmd =
      env + " " + std::string(LOWBIT_CLI) + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null");
  FILE* p = popen(cmd.c_str(), "r");
  Result r{-1, ""};
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// A strict JSON syntax check (objects, arrays, strings, numbers, literals).
struct JsonChecker {
  const std::string& s;
  size_t i = 0;
  void ws() { while (i < s.size() && isspace(static_cast<unsigned char>(s[i]))) ++i; }
  bool lit(const char* w) {
    const size_t n = strlen(w);
    if (s.compare(i, n, w) != 0) return false;
    i += n;
    return true;
  }
  bool str() {
    if (s[i] != '"') return false;
    for (++i; i < s.size(); ++i) {
      if (s[i] == '\\') ++i;
      else if (s[i] == '"') { ++i; return true; }
    }
    return false;
  }
  bool num() {
    const size_t start = i;
    while (i < s.size() && (isdigit(static_cast<unsigned char>(s[i])) || strchr("+-.eE", s[i]))) ++i;
    return i > start;
  }
  bool value() {
    ws();
    if (i >= s.size()) return false;
    bool ok;
    if (s[i] == '{') {
      ++i; ws();
      if (s[i] == '}') { ++i; return true; }
      do { ws(); ok = str(); ws(); if (!ok || s[i] != ':') return false; ++i; if (!value()) return false; ws(); }
      while (s[i] == ',' && ++i);
      if (s[i] != '}') return false;
      ++i; return true;
    }
    if (s[i] == '[') {
      ++i; ws();
      if (s[i] == ']') { ++i; return true; }
      do { if (!value()) return false; ws(); } while (s[i] == ',' && ++i);
      if (s[i] != ']') return false;
      ++i; return true;
    }
    if (s[i] == '"') return str();
    return lit("true") || lit("false") || lit("null") || num();
  }
  bool document() { const bool ok = value(); ws(); return ok && i == s.size(); }
};

void expect_json_with(const std::string& out, std::initializer_list<const char*> keys) {
  JsonChecker c{out};
  EXPECT_TRUE(c.document()) << "not valid JSON: " << out.substr(0, 300);
  for (const char* k : keys) EXPECT_NE(out.find(std::string("\"") + k + "\":"), std::string::npos) << k;
}

TEST(Cli, UsageAndBadArgumentsExitTwo) {
  EXPECT_EQ(run("").status, 2);
  EXPECT_EQ(run("frobnicate").status, 2);
  EXPECT_EQ(run("--help").status, 0);
  EXPECT_EQ(run("info --bogus").status, 2);
  EXPECT_EQ(run("explain --n 64 --k 64 --m 1 --bits 9 --group 32").status, 2);
  EXPECT_EQ(run("explain --n 64 --k 64 --m 1 --bits 4").status, 2);  // missing --group
  EXPECT_EQ(run("explain --n 64 --k 48 --m 1 --bits 4 --group 32").status, 2);
  EXPECT_EQ(run("explain --n x --k 64 --m 1 --bits 4 --group 32").status, 2);
  EXPECT_EQ(run("run --model gpt5").status, 2);
  EXPECT_EQ(run("pack --n 4 --k 32 --bits 4 --group 16").status, 2);  // missing --out
  EXPECT_EQ(run("inspect").status, 2);
}

// A usage error is the message and one line pointing to the help, not the whole usage.
TEST(Cli, UsageErrorsPrintTheErrorAndWhereTheHelpIs) {
  const struct {
    const char *args, *error, *hint;
  } cases[] = {
      {"explain --n 64 --k 64 --m 1 --bits 9 --group 32", "lowbit explain: ", "run 'lowbit explain --help' for the options"},
      {"info --bogus", "lowbit info: ", "run 'lowbit info --help' for the options"},
      {"run --model gpt5", "lowbit run: ", "run 'lowbit run --help' for the options"},
      {"frobnicate", "lowbit: unknown command 'frobnicate'", "run 'lowbit --help' for the commands"},
  };
  for (const auto& c : cases) {
    const Result r = run(c.args, "", true);
    EXPECT_EQ(r.status, 2) << c.args;
    EXPECT_EQ(r.out.rfind(c.error, 0), 0u) << c.args << ": " << r.out;
    const size_t first_line = r.out.find('\n');
    ASSERT_NE(first_line, std::string::npos) << c.args << ": " << r.out;
    EXPECT_EQ(r.out.substr(first_line + 1), std::string(c.hint) + "\n") << c.args;
  }
}

TEST(Cli, HelpPrintsUsageAndExitsZero) {
  for (const char* args : {"--help", "-h", "help", "info --help", "explain --help", "run -h",
                           "pack --help", "inspect --help", "bench --help", "regret --help",
                           "explain --n 64 --help"}) {
    const Result r = run(args);
    EXPECT_EQ(r.status, 0) << args;
    EXPECT_EQ(r.out.rfind("usage: lowbit", 0), 0u) << args << ": " << r.out;
  }
}

TEST(Cli, IsaCapIsHonouredAndABadOneIsAnError) {
  EXPECT_EQ(run("info", "LOWBIT_ISA=bogus").status, 1);
  const Result r = run("explain --n 256 --k 256 --m 4 --bits 4 --group 32 --json", "LOWBIT_ISA=scalar");
  ASSERT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("\"layout\":{\"name\":\"portable_n1k1s1\""), std::string::npos) << r.out.substr(0, 400);
}

TEST(Cli, LogSelectPrintsFreshDecisions) {
  const lowbit::test::TempDir tmp("lowbit_cli_log");
  const Result r =
      run("pack --n 64 --k 64 --bits 4 --group 32 --out " + tmp.path() + "/w.lbw", "LOWBIT_LOG=select", true);
  ASSERT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("lowbit select layout"), std::string::npos) << r.out;
}

TEST(Cli, Info) {
  const Result r = run("info --json");
  ASSERT_EQ(r.status, 0);
  expect_json_with(r.out, {"profile", "isa", "cores", "uarch", "cluster", "kernels", "name", "runnable"});
  EXPECT_NE(r.out.find("qa8_qw_gemm_1x1c1__scalar"), std::string::npos);
  const Result t = run("info");
  EXPECT_EQ(t.status, 0);
  EXPECT_NE(t.out.find("runs here"), std::string::npos);
}

TEST(Cli, Explain) {
  const Result r = run("explain --n 4096 --k 4096 --m 7 --bits 4 --group 32 --json");
  ASSERT_EQ(r.status, 0);
  expect_json_with(r.out, {"profile", "layout", "candidates", "plan", "kernels", "name", "isa", "mr",
                           "rows", "eligible", "reason", "cost", "source", "tuning", "machine", "override"});
  const Result portable = run("explain --n 64 --k 64 --m 1 --bits 3 --group 32 --target portable --json");
  ASSERT_EQ(portable.status, 0);
  EXPECT_NE(portable.out.find("\"name\":\"portable_n1k1s1\""), std::string::npos) << portable.out;
  EXPECT_EQ(run("explain --n 64 --k 64 --m 1 --bits 4 --group 32 --target riscv").status, 1);
  const Result text = run("explain --n 64 --k 128 --m 5 --bits 4 --group 32 --zeros --bias --threads 1");
  EXPECT_EQ(text.status, 0);
  EXPECT_NE(text.out.find("lowbit select plan"), std::string::npos);
  EXPECT_EQ(text.out.find("working set:"), std::string::npos) << text.out;
  // One layer of a model of 1 GiB of packed weights: planned with that working set.
  const Result model = run("explain --n 64 --k 128 --m 1 --bits 4 --group 32 --working-set-mib 1024");
  EXPECT_EQ(model.status, 0);
  EXPECT_NE(model.out.find("working set: 1024 MiB of packed weights read in turn"), std::string::npos) << model.out;
  const Result model_json = run("explain --n 64 --k 128 --m 1 --bits 4 --group 32 --working-set-mib 1024 --json");
  EXPECT_NE(model_json.out.find("\"working_set_bytes\":1073741824"), std::string::npos) << model_json.out;
  EXPECT_EQ(run("explain --n 64 --k 128 --m 1 --bits 4 --group 32 --working-set-mib -1").status, 2);
}

TEST(Cli, PackInspectAndCorruptFiles) {
  const lowbit::test::TempDir tmp("lowbit_cli_weights");
  const std::string path = tmp.path() + "/w.lbw";
  Result r = run("pack --n 40 --k 64 --bits 3 --group 32 --zeros --bias --out " + path + " --json");
  ASSERT_EQ(r.status, 0) << r.out;
  expect_json_with(r.out, {"layout", "n", "k", "bits", "group", "payload_bytes"});
  r = run("inspect " + path + " --json");
  ASSERT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("\"valid\":true"), std::string::npos);
  EXPECT_NE(r.out.find("\"bits\":3"), std::string::npos);
  // Corrupt one payload byte: inspect must fail with a message.
  FILE* f = fopen(path.c_str(), "r+b");
  ASSERT_NE(f, nullptr);
  fseek(f, 150, SEEK_SET);
  const int c = fgetc(f);
  fseek(f, 150, SEEK_SET);
  fputc(c ^ 1, f);
  fclose(f);
  r = run("inspect " + path + " --json");
  EXPECT_EQ(r.status, 1);
  expect_json_with(r.out, {"valid", "status", "error"});
  EXPECT_NE(r.out.find("checksum"), std::string::npos);
  EXPECT_EQ(run("inspect /nonexistent.lbw").status, 1);
}

TEST(Cli, PackFromNpy) {
  const lowbit::test::TempDir tmp("lowbit_cli_npy");
  const std::string npy = tmp.path() + "/w.npy", out = tmp.path() + "/w.lbw";
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 32), }";
  header += std::string(128 - 10 - header.size() - 1, ' ') + "\n";
  FILE* f = fopen(npy.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  fwrite("\x93NUMPY\x01\x00", 1, 8, f);
  fputc(int(header.size()), f);
  fputc(0, f);
  fwrite(header.data(), 1, header.size(), f);
  for (int i = 0; i < 96; ++i) {
    const float v = 0.01f * float(i % 17) - 0.05f;
    fwrite(&v, 4, 1, f);
  }
  fclose(f);
  Result r = run("pack --in " + npy + " --bits 4 --group 16 --out " + out + " --json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("\"n\":3"), std::string::npos);
  EXPECT_NE(r.out.find("\"k\":32"), std::string::npos);
  // A truncated .npy is a clear error.
  f = fopen(npy.c_str(), "r+b");
  ASSERT_EQ(ftruncate(fileno(f), 100), 0);
  fclose(f);
  EXPECT_EQ(run("pack --in " + npy + " --bits 4 --group 16 --out " + out).status, 1);
}

TEST(Cli, RunSmallModel) {
  const Result r = run("run --model qwen2.5-0.5b --m 8 --json");
  ASSERT_EQ(r.status, 0) << r.out.substr(0, 500);
  expect_json_with(r.out, {"layers", "decode_kernels", "prefill_kernels", "bit_exact", "per_token"});
  EXPECT_EQ(r.out.find("\"bit_exact\":false"), std::string::npos);
}

TEST(Cli, BenchAndRegretQuick) {
  Result r = run("bench --quick --reps 1 --json");
  ASSERT_EQ(r.status, 0);
  expect_json_with(r.out, {"rows", "lowbit_ms", "openblas_ms", "reference_ms", "weight_gbps", "stream_gbps"});
  r = run("regret --quick --reps 1 --json");
  ASSERT_EQ(r.status, 0);
  expect_json_with(r.out, {"cases", "n", "k", "m", "chosen", "best", "regret", "geomean", "worst"});
  EXPECT_EQ(r.out.find("\"options\""), std::string::npos) << "options only with --all";
}

// `lowbit bench --widths`: every width's row has a decode, the plain read of the same bytes at
// the same thread count, and prefill; a width is compared to 4 bits of its thread count.
TEST(Cli, BenchWidthsQuick) {
  const Result r = run("bench --widths --quick --bits 2,4 --threads 1,2 --reps 3 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  expect_json_with(r.out, {"rows", "decode_us", "decode_gbps", "stream_us", "stream_gbps", "of_stream",
                           "gbps_of_4bit", "prefill_gops", "gops_of_4bit", "decode_kernels", "prefill_kernels"});
  for (const char* row : {"{\"bits\":2,\"threads\":1,", "{\"bits\":4,\"threads\":2,"})
    EXPECT_NE(r.out.find(row), std::string::npos) << row;
  size_t streams = 0;  // a plain read at every thread count, not only at one thread
  for (size_t at = 0; (at = r.out.find("\"stream_us\":", at)) != std::string::npos; ++at) ++streams;
  EXPECT_EQ(streams, 4u) << r.out;
  EXPECT_NE(r.out.find("\"gbps_of_4bit\":1,"), std::string::npos) << "4 bits against itself";
  EXPECT_EQ(run("bench --widths --quick --case both").status, 2);
}

// A named kernel without a width skips it (and says so); 4 bits of the first contender are then
// its reference. The table-lookup GEMV has no 4-bit weights.
TEST(Cli, BenchWidthsSkipsAWidthAKernelLacks) {
  const char* lut = "qa8_qw_lut_gemv_1x32__avx2";
  const lowbit::KernelDesc* kd = lowbit::default_registry().kernel(lut);
  ASSERT_NE(kd, nullptr);
  if (!lowbit::host_profile().isa.contains(kd->requires) || kd->fn == nullptr) GTEST_SKIP() << "needs AVX2";
  const std::string both = std::string("--decode-kernel qa8_qw_gemv_1x8c4__avx2,") + lut;
  Result r = run("bench --widths --quick --case decode --bits 2,4 --threads 1 --reps 3 --json " + both);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find(std::string("\"skipped\":[\"") + lut + " has no 4-bit weights\"]"), std::string::npos) << r.out;
  size_t rows = 0;  // 2 bits by both kernels, 4 bits by the dot-product one
  for (size_t at = 0; (at = r.out.find("\"decode_kernels\":", at)) != std::string::npos; ++at) ++rows;
  EXPECT_EQ(rows, 3u) << r.out;
  EXPECT_NE(r.out.find(std::string(lut) + "×1\",\"stream_us\""), std::string::npos) << r.out;
  r = run("bench --widths --quick --case decode --bits 4 --decode-kernel " + std::string(lut), "", true);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("no 4-bit weights"), std::string::npos) << r.out;
}

TEST(Cli, RegretOneCaseWithEveryOption) {
  Result r = run("regret --n 256 --k 512 --m 5 --reps 1 --all --json");
  ASSERT_EQ(r.status, 0);
  expect_json_with(r.out, {"cases", "options", "name", "est_ms", "ms", "regret", "geomean", "worst"});
  EXPECT_NE(r.out.find("\"n\":256"), std::string::npos);
  EXPECT_NE(r.out.find("\"m\":5"), std::string::npos);
  EXPECT_EQ(r.out.find("\"m\":1,"), std::string::npos) << "only the asked m";
  r = run("regret --n 256 --m 5", "", true);
  EXPECT_EQ(r.status, 2) << "--n without --k";
  EXPECT_NE(r.out.find("--k"), std::string::npos) << r.out;
}

TEST(Cli, RegretAtOtherBitWidthsAndGroups) {
  const Result r = run("regret --n 128 --k 256 --m 3 --bits 2 --group 128 --reps 1 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  expect_json_with(r.out, {"bits", "group", "tuning", "cases", "geomean"});
  EXPECT_NE(r.out.find("\"bits\":2"), std::string::npos);
  EXPECT_NE(r.out.find("\"group\":128"), std::string::npos);
  EXPECT_EQ(run("regret --n 128 --k 256 --m 3 --bits 9").status, 2);
}

// `lowbit tune` on a tiny budget (--smoke): it writes a record, and that record is then used.
TEST(Cli, TuneWritesARecordThatLoads) {
  const lowbit::test::TempDir tmp("lowbit_cli_tune");
  const std::string dir = tmp.path();
  const std::string env = "XDG_CACHE_HOME=" + dir + " LOWBIT_TUNING=";
  Result r = run("tune --smoke --shapes 64:256,48:128 --bits 2,4 --json", env);
  ASSERT_EQ(r.status, 0) << r.out;
  expect_json_with(r.out, {"record", "caches", "sweep", "bandwidth", "threading", "kernels", "worst_error",
                           "samples", "retimed", "shapes", "speedup", "speedup_again", "override", "overrides"});
  for (const char* bits : {"2", "4"})  // every shape, bit width and m is measured
    EXPECT_NE(r.out.find(std::string("\"n\":48,\"k\":128,\"bits\":") + bits + ",\"group\":32,\"m\":4"),
              std::string::npos) << bits;
  // Written to the cache directory, by signature: the next run finds it there.
  const size_t at = r.out.find("\"record\":\"") + 10;
  const std::string path = r.out.substr(at, r.out.find('"', at) - at);
  EXPECT_EQ(path.rfind(dir + "/lowbit/tuning-", 0), 0u) << path;
  // Each kernel that prefetches its weights got a distance, and only those.
  {
    std::ifstream in(path, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const lowbit::TuningRecord rec = lowbit::parse_record(text);
    ASSERT_FALSE(rec.kernels.empty());
    for (const lowbit::KernelEntry& e : rec.kernels) {
      const lowbit::KernelDesc* kd = lowbit::default_registry().kernel(e.name);
      ASSERT_NE(kd, nullptr) << e.name;
      if (kd->prefetch_bytes > 0) EXPECT_GE(e.prefetch_bytes, 0) << e.name;
      else EXPECT_EQ(e.prefetch_bytes, -1) << e.name;
    }
  }
  r = run("explain --n 256 --k 512 --m 3 --bits 4 --group 32 --json", env);
  ASSERT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("\"tuning\":\"cache " + path), std::string::npos) << r.out.substr(0, 400);
  // LOWBIT_TUNING names a file; LOWBIT_LOG=tuning says which record is used.
  r = run("explain --n 256 --k 512 --m 3 --bits 4 --group 32", "LOWBIT_LOG=tuning LOWBIT_TUNING=" + path, true);
  EXPECT_NE(r.out.find("using file " + path), std::string::npos) << r.out.substr(0, 400);
  r = run("explain --n 256 --k 512 --m 3 --bits 4 --group 32", "LOWBIT_LOG=tuning LOWBIT_TUNING=none", true);
  EXPECT_NE(r.out.find("using generic (LOWBIT_TUNING=none)"), std::string::npos) << r.out.substr(0, 400);
  // regret --compare judges several tunings' choices by the same measurements.
  r = run("regret --n 64 --k 256 --m 3 --reps 1 --json --compare none," + path, env);
  ASSERT_EQ(r.status, 0) << r.out;
  expect_json_with(r.out, {"picks", "tunings", "compare", "tuning", "geomean", "worst"});
  EXPECT_NE(r.out.find("{\"compare\":\"none\",\"tuning\":\"generic\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"tuning\":\"file " + path + "\""), std::string::npos) << r.out;
  r = run("regret --n 64 --k 256 --m 3 --reps 1 --compare none," + dir + "/missing.json", env, true);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("missing.json"), std::string::npos) << r.out;
  // A damaged record is skipped with a message.
  FILE* f = std::fopen(path.c_str(), "r+b");
  ASSERT_NE(f, nullptr);
  std::fseek(f, 100, SEEK_SET);
  std::fputc('#', f);
  std::fclose(f);
  r = run("explain --n 256 --k 512 --m 3 --bits 4 --group 32", "LOWBIT_LOG=tuning " + env, true);
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("ignored: tuning record: checksum"), std::string::npos) << r.out.substr(0, 600);
  EXPECT_EQ(run("tune --shapes nonsense --smoke --out " + dir + "/x.json").status, 2);
  for (const char* bad : {"--bits 4,4", "--bits 4,", "--bits 9", "--group 32,x"}) {
    r = run(std::string("tune --smoke --shapes 64:256 ") + bad + " --out " + dir + "/x.json", "", true);
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_NE(r.out.find(bad[2] == 'b' ? "--bits" : "--group"), std::string::npos) << r.out;
  }
  std::remove(path.c_str());
}

}  // namespace

// A tuning record: what `lowbit tune` measured on one CPU, as versioned, checksummed JSON
// (docs/tuning.md has the format and the rules for when a record applies).
//
// Reading never trusts the text: every field is checked for presence, type and range, and
// anything wrong throws Error(corrupt_data) naming the field.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cpu/cpu_id.h"
#include "cpu/profile.h"
#include "select/kernel_cost.h"
#include "util/json.h"

namespace lowbit {

constexpr int kTuningFormat = 1;     // bump when the meaning of a field changes
constexpr int kMaxRecordThreads = 64;  // bandwidth tables cover 1..this many workers

// The machine a record describes. `scope` says how much of it must match the host.
struct CpuSignature {
  Arch arch = Arch::unknown;
  CpuId id;
  Uarch uarch = Uarch::unknown;  // the most common core's
  IsaSet isa;                     // as detected, before LOWBIT_ISA
  int cores = 0;
};

// Bytes per cycle that one worker reads while `w` workers read, w = 1..size(); a level without
// measurements is empty.
struct BandwidthTable {
  std::vector<double> l2, l3, dram;
  bool empty() const { return l2.empty() && l3.empty() && dram.empty(); }
};

// The largest fit_error a record holds (10000 %: the fit explains nothing); writers cap at it.
constexpr double kMaxFitError = 100.0;

struct KernelEntry {
  std::string name;
  std::string identity;  // Registry::identity() of the kernel it was measured as
  KernelCost cost{};
  BandwidthTable bandwidth;  // as this kernel reads (optional)
  double fit_error = 0.0;    // worst relative error of the fit over its samples (<= kMaxFitError)
  int samples = 0;
  // The software-prefetch distance it read DRAM fastest at (bytes, a multiple of 64 up to
  // kMaxPrefetchBytes; 0: none), for kernels that prefetch; -1: not measured.
  int prefetch_bytes = -1;
};

// A measured winner: when (layout, n, k, bits, group, m, threads) match, this plan is used.
struct PlanOverride {
  std::string layout;
  int n = 0, k = 0, bits = 0, group = 0, m = 0, threads = 0;
  std::vector<std::pair<std::string, int>> segments;  // (kernel, rows), in row order
  int row_tile = 0, col_tile = 0;
  double speedup = 1.0;  // measured time of the model's choice / the winner's, when recorded
};

struct TuningRecord {
  int format = kTuningFormat;
  std::string name;            // e.g. "zen5-2026-11-30"
  std::string lowbit_version;  // of the lowbit that wrote it
  std::string scope = "cpu";   // "cpu": this exact CPU; "uarch": any CPU of its vendor and uarch
  std::string source;          // how the numbers were obtained (free text)
  CpuSignature cpu;
  std::string registry;        // Registry::fingerprint() the overrides were measured against
  CacheSizes caches;           // as measured (where bandwidth steps down); 0 = not measured
  BandwidthTable bandwidth;    // what the memory reads at each level
  double task_cycles = 0.0;    // per task handed to the pool; 0 = not measured
  std::vector<double> dispatch_cycles;  // per parallel call at w = 1.. workers (empty: none)
  std::vector<KernelEntry> kernels;
  std::vector<PlanOverride> overrides;
};

// An empty record for this machine and this build: name, lowbit version, scope "cpu", the
// host signature and the default registry's fingerprint.
TuningRecord record_for_this_machine(const std::string& name);

// The JSON text, with its checksum.
std::string record_to_json(const TuningRecord& r);
// The text with its checksum digits made to match it (unchanged without a checksum key): for
// the writer, and for fuzzers that mutate the fields behind the checksum.
std::string with_valid_checksum(std::string text);
// A BandwidthTable as the record writes it: {"l2": [...], "l3": [...], "dram": [...]}.
void bandwidth_json(JsonWriter& j, const BandwidthTable& t);

// Parses and validates a record (format, checksum, every field's type and range). Throws
// Error(corrupt_data) naming the problem. Does not check that it fits this machine.
TuningRecord parse_record(std::string_view text);

// The version of this library ("0.1.0").
const char* library_version();

// Why `r` does not describe `host` (format, lowbit version, CPU per its scope), or "".
std::string record_mismatch(const TuningRecord& r, const CpuSignature& host);

// This machine's signature (detect_host_profile(): the ISA before LOWBIT_ISA).
CpuSignature host_signature();

// The file name `lowbit tune` writes and the lookup reads for `sig` in the cache directory.
std::string record_file_name(const CpuSignature& sig);

// $XDG_CACHE_HOME/lowbit, else $HOME/.cache/lowbit ("" when neither is set).
std::string tuning_cache_dir();

}  // namespace lowbit

#include "args.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace lowbit::cli {

Args::Args(int argc, char** argv, const std::set<std::string>& flags,
           const std::set<std::string>& options) {
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--", 0) != 0) {
      positional_.push_back(a);
      continue;
    }
    const std::string name = a.substr(2);
    if (flags.count(name)) {
      flags_.insert(name);
    } else if (options.count(name)) {
      if (i + 1 >= argc) throw UsageError("option --" + name + " needs a value");
      options_[name] = argv[++i];
    } else {
      throw UsageError("unknown option " + a);
    }
  }
}

std::string Args::str(const std::string& name, const std::string& def) const {
  auto it = options_.find(name);
  return it == options_.end() ? def : it->second;
}

namespace {

long parse_integer(const std::string& name, const std::string& text, long lo, long hi) {
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str() || *end != '\0')
    throw UsageError("--" + name + " expects an integer, got '" + text + "'");
  if (v < lo || v > hi)
    throw UsageError("--" + name + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + text);
  return v;
}

}  // namespace

long Args::integer(const std::string& name, long lo, long hi) const {
  auto it = options_.find(name);
  if (it == options_.end()) throw UsageError("missing --" + name);
  return parse_integer(name, it->second, lo, hi);
}

std::vector<long> Args::integers(const std::string& name, long lo, long hi, const std::vector<long>& def) const {
  auto it = options_.find(name);
  if (it == options_.end()) return def;
  std::vector<long> out;
  size_t at = 0;
  for (;;) {
    const size_t comma = it->second.find(',', at);
    const long v = parse_integer(name, it->second.substr(at, comma - at), lo, hi);
    if (std::find(out.begin(), out.end(), v) != out.end())
      throw UsageError("--" + name + " lists " + std::to_string(v) + " twice");
    out.push_back(v);
    if (comma == std::string::npos) return out;
    at = comma + 1;
  }
}

long Args::integer(const std::string& name, long lo, long hi, long def) const {
  return has(name) ? integer(name, lo, hi) : def;
}

}  // namespace lowbit::cli

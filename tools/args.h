// Command-line options: "--name value" and "--flag". A bad option is a UsageError (exit 2).
#pragma once

#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace lowbit::cli {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Args {
 public:
  // `flags` take no value; `options` take one; anything else is an error. Positional
  // arguments are collected in order.
  Args(int argc, char** argv, const std::set<std::string>& flags,
       const std::set<std::string>& options);
  bool flag(const std::string& name) const { return flags_.count(name) != 0; }
  bool has(const std::string& name) const { return options_.count(name) != 0; }
  std::string str(const std::string& name, const std::string& def = "") const;
  // Integer in [lo, hi]; required when def is absent.
  long integer(const std::string& name, long lo, long hi) const;
  long integer(const std::string& name, long lo, long hi, long def) const;
  // A comma-separated list of distinct integers in [lo, hi] ("4" or "2,4,8"); `def` when absent.
  std::vector<long> integers(const std::string& name, long lo, long hi, const std::vector<long>& def) const;
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  std::set<std::string> flags_;
  std::map<std::string, std::string> options_;
  std::vector<std::string> positional_;
};

}  // namespace lowbit::cli

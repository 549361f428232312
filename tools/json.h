// A minimal JSON writer for the CLI's --json output (schemas in docs/cli.md).
#pragma once

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace lowbit::cli {

class Json {
 public:
  Json& begin_object() { return open('{'); }
  Json& end_object() { return close('}'); }
  Json& begin_array() { return open('['); }
  Json& end_array() { return close(']'); }
  Json& key(const std::string& k) {
    comma();
    quote(k);
    out_ += ':';
    after_key_ = true;
    return *this;
  }
  Json& value(const std::string& s) { comma(); quote(s); return *this; }
  Json& value(const char* s) { return value(std::string(s)); }
  Json& value(bool b) { comma(); out_ += b ? "true" : "false"; return *this; }
  Json& value(int v) { return number(std::to_string(v)); }
  Json& value(long v) { return number(std::to_string(v)); }
  Json& value(unsigned long v) { return number(std::to_string(v)); }
  Json& value(unsigned long long v) { return number(std::to_string(v)); }
  Json& value(double v) {
    if (!std::isfinite(v)) return number("null");
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return number(buf);
  }
  Json& null() { return number("null"); }
  template <typename T>
  Json& field(const std::string& k, const T& v) { key(k); return value(v); }
  const std::string& str() const { return out_; }

 private:
  Json& open(char c) {
    comma();
    out_ += c;
    first_.push_back(true);
    return *this;
  }
  Json& close(char c) {
    out_ += c;
    first_.pop_back();
    return *this;
  }
  Json& number(const std::string& s) { comma(); out_ += s; return *this; }
  void comma() {
    if (after_key_) { after_key_ = false; return; }
    if (!first_.empty()) {
      if (!first_.back()) out_ += ',';
      first_.back() = false;
    }
  }
  void quote(const std::string& s) {
    out_ += '"';
    for (char c : s) {
      if (c == '"' || c == '\\') { out_ += '\\'; out_ += c; }
      else if (static_cast<unsigned char>(c) < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out_ += buf;
      } else out_ += c;
    }
    out_ += '"';
  }
  std::string out_;
  std::vector<bool> first_;
  bool after_key_ = false;
};

}  // namespace lowbit::cli

// Minimal JSON: a writer (the CLI's --json output, tuning records) and a strict reader for data
// from outside (tuning records, measurement files), which never trusts its input.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lowbit {

class JsonWriter {
 public:
  // pretty_depth: containers nested up to this depth put each element on its own line.
  explicit JsonWriter(int pretty_depth = 0) : pretty_depth_(pretty_depth) {}
  JsonWriter& begin_object() { return open('{'); }
  JsonWriter& end_object() { return close('}'); }
  JsonWriter& begin_array() { return open('['); }
  JsonWriter& end_array() { return close(']'); }
  JsonWriter& key(const std::string& k) {
    comma();
    quote(k);
    out_ += pretty_depth_ > 0 ? ": " : ":";
    after_key_ = true;
    return *this;
  }
  JsonWriter& value(const std::string& s) { comma(); quote(s); return *this; }
  JsonWriter& value(const char* s) { return value(std::string(s)); }
  JsonWriter& value(bool b) { comma(); out_ += b ? "true" : "false"; return *this; }
  JsonWriter& value(int v) { return number(std::to_string(v)); }
  JsonWriter& value(long v) { return number(std::to_string(v)); }
  JsonWriter& value(unsigned long v) { return number(std::to_string(v)); }
  JsonWriter& value(unsigned long long v) { return number(std::to_string(v)); }
  JsonWriter& value(double v) { return real(v, 6); }
  // A number that reads back as the same float (9 significant digits).
  JsonWriter& exact(double v) { return real(v, 9); }
  JsonWriter& null() { return number("null"); }
  template <typename T>
  JsonWriter& field(const std::string& k, const T& v) { key(k); return value(v); }
  const std::string& str() const { return out_; }

 private:
  JsonWriter& real(double v, int digits) {
    if (!std::isfinite(v)) return number("null");
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    return number(buf);
  }
  JsonWriter& open(char c) {
    comma();
    out_ += c;
    first_.push_back(true);
    return *this;
  }
  JsonWriter& close(char c) {
    const bool empty = first_.back();
    first_.pop_back();
    if (!empty) newline();
    out_ += c;
    return *this;
  }
  JsonWriter& number(const std::string& s) { comma(); out_ += s; return *this; }
  void newline() {
    if (int(first_.size()) >= pretty_depth_ || pretty_depth_ == 0) return;
    out_ += '\n';
    out_.append(2 * first_.size(), ' ');
  }
  void comma() {
    if (after_key_) { after_key_ = false; return; }
    if (!first_.empty()) {
      if (!first_.back()) out_ += ',';
      first_.back() = false;
      if (int(first_.size()) <= pretty_depth_) {
        out_ += '\n';
        out_.append(2 * first_.size(), ' ');
      }
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
  int pretty_depth_;
};

// A parsed JSON value. Objects keep their members in order; a duplicate key is an error.
struct JsonValue {
  enum class Type { null, boolean, number, string, array, object };
  Type type = Type::null;
  bool boolean = false;
  double number = 0.0;
  std::string string;
  std::vector<JsonValue> items;                              // array
  std::vector<std::pair<std::string, JsonValue>> members;   // object

  bool is(Type t) const { return type == t; }
  // The member `key` of an object, or nullptr (also when this is not an object).
  const JsonValue* get(std::string_view key) const;
};

// Parses one JSON text (RFC 8259; UTF-8 is passed through, \u escapes are decoded). Throws
// lowbit::Error(corrupt_data) naming the byte offset and what was expected. Nesting deeper
// than `max_depth` is an error (no recursion limit can be reached from the input).
JsonValue parse_json(std::string_view text, int max_depth = 32);

}  // namespace lowbit

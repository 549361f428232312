#include "util/json.h"

#include <charconv>
#include <cstdint>

#include "util/error.h"

namespace lowbit {

const JsonValue* JsonValue::get(std::string_view key) const {
  if (type != Type::object) return nullptr;
  for (const auto& [k, v] : members)
    if (k == key) return &v;
  return nullptr;
}

namespace {

class Parser {
 public:
  Parser(std::string_view s, int max_depth) : s_(s), max_depth_(max_depth) {}

  JsonValue document() {
    JsonValue v = value(0);
    skip_ws();
    if (i_ != s_.size()) error("end of text");
    return v;
  }

 private:
  [[noreturn]] void error(const char* expected) const {
    fail(Status::corrupt_data, "JSON: expected ", expected, " at byte ", i_,
         i_ < s_.size() ? "" : " (end of text)");
  }
  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  bool eat(char c) {
    skip_ws();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool literal(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }

  JsonValue value(int depth) {
    if (depth > max_depth_) error("less nesting");
    skip_ws();
    if (i_ >= s_.size()) error("a value");
    JsonValue v;
    const char c = s_[i_];
    if (c == '{') {
      ++i_;
      v.type = JsonValue::Type::object;
      if (eat('}')) return v;
      do {
        skip_ws();
        if (i_ >= s_.size() || s_[i_] != '"') error("a member name");
        std::string k = string();
        if (v.get(k) != nullptr) error("no duplicate member name");
        if (!eat(':')) error("':'");
        v.members.emplace_back(std::move(k), value(depth + 1));
      } while (eat(','));
      if (!eat('}')) error("',' or '}'");
    } else if (c == '[') {
      ++i_;
      v.type = JsonValue::Type::array;
      if (eat(']')) return v;
      do v.items.push_back(value(depth + 1));
      while (eat(','));
      if (!eat(']')) error("',' or ']'");
    } else if (c == '"') {
      v.type = JsonValue::Type::string;
      v.string = string();
    } else if (literal("true") || literal("false")) {
      v.type = JsonValue::Type::boolean;
      v.boolean = c == 't';
    } else if (literal("null")) {
      v.type = JsonValue::Type::null;
    } else {
      v.type = JsonValue::Type::number;
      v.number = number();
    }
    return v;
  }

  // RFC 8259 number grammar, checked before conversion (from_chars alone accepts more).
  double number() {
    const size_t start = i_;
    auto digits = [&] {
      const size_t d = i_;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
      return i_ > d;
    };
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    if (i_ < s_.size() && s_[i_] == '0') ++i_;
    else if (!digits()) error("a value");
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_;
      if (!digits()) error("a digit after '.'");
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (!digits()) error("an exponent");
    }
    double v = 0.0;
    const auto r = std::from_chars(s_.data() + start, s_.data() + i_, v);
    if (r.ec != std::errc() || r.ptr != s_.data() + i_) {
      i_ = start;
      error("a number in range");
    }
    return v;
  }

  unsigned hex4() {
    if (s_.size() - i_ < 4) error("4 hex digits");
    unsigned u = 0;
    for (int j = 0; j < 4; ++j) {
      const char h = s_[i_++];
      u <<= 4;
      if (h >= '0' && h <= '9') u |= unsigned(h - '0');
      else if (h >= 'a' && h <= 'f') u |= unsigned(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F') u |= unsigned(h - 'A' + 10);
      else error("a hex digit");
    }
    return u;
  }

  void utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  }

  std::string string() {
    ++i_;  // the opening quote
    std::string out;
    for (;;) {
      if (i_ >= s_.size()) error("'\"'");
      const char c = s_[i_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) {
        --i_;
        error("no control character in a string");
      }
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) error("an escape");
      const char e = s_[i_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          uint32_t cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00) {
            if (!literal("\\u")) error("a low surrogate");
            const uint32_t lo = hex4();
            if (lo < 0xDC00 || lo >= 0xE000) error("a low surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp < 0xE000) {
            error("no lone low surrogate");
          }
          utf8(out, cp);
          break;
        }
        default:
          --i_;
          error("a valid escape");
      }
    }
  }

  std::string_view s_;
  size_t i_ = 0;
  int max_depth_;
};

}  // namespace

JsonValue parse_json(std::string_view text, int max_depth) { return Parser(text, max_depth).document(); }

}  // namespace lowbit

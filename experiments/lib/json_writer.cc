#include "experiments/lib/json_writer.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

namespace schedlab {
namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 if invalid
// (overlong forms, surrogates and code points above U+10FFFF are invalid).
size_t utf8_sequence_length(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  size_t n;
  uint32_t cp;
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
    cp = c & 0x1f;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    cp = c & 0x0f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3f);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
    return 0;
  return n;
}

}  // namespace

void append_json_string(std::string& out, std::string_view s) {
  out.push_back('"');
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': out += "\\\""; ++i; continue;
      case '\\': out += "\\\\"; ++i; continue;
      case '\b': out += "\\b"; ++i; continue;
      case '\f': out += "\\f"; ++i; continue;
      case '\n': out += "\\n"; ++i; continue;
      case '\r': out += "\\r"; ++i; continue;
      case '\t': out += "\\t"; ++i; continue;
      default: break;
    }
    if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\u{:04x}", c);
      ++i;
      continue;
    }
    size_t n = utf8_sequence_length(s, i);
    if (n == 0) {
      out += "\\ufffd";
      ++i;
      continue;
    }
    out.append(s.substr(i, n));
    i += n;
  }
  out.push_back('"');
}

std::string json_quote(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

std::string json_number(double v, int decimals) {
  if (!std::isfinite(v)) return "null";
  std::string s = fmt::format("{:.{}f}", v, decimals);
  // "-0.000" (a tiny negative rounded to zero) reads as a sign error.
  if (s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
  return s;
}

void JsonWriter::newline_indent() {
  out_.push_back('\n');
  out_.append(2 * stack_.size(), ' ');
}

void JsonWriter::before_value() {
  if (stack_.empty()) {
    if (started_) throw std::logic_error("JsonWriter: second top-level value");
    started_ = true;
    return;
  }
  Level& top = stack_.back();
  if (top.is_object) {
    if (!have_key_) throw std::logic_error("JsonWriter: object member without key");
    have_key_ = false;
    return;  // key() already placed the separator and indentation
  }
  if (!top.empty) out_.push_back(',');
  top.empty = false;
  newline_indent();
}

JsonWriter& JsonWriter::key(std::string_view k) {
  if (stack_.empty() || !stack_.back().is_object || have_key_) throw std::logic_error("JsonWriter: misplaced key");
  Level& top = stack_.back();
  if (!top.empty) out_.push_back(',');
  top.empty = false;
  newline_indent();
  append_json_string(out_, k);
  out_ += ": ";
  have_key_ = true;
  return *this;
}

void JsonWriter::begin_object() {
  before_value();
  out_.push_back('{');
  stack_.push_back({true});
}

void JsonWriter::begin_array() {
  before_value();
  out_.push_back('[');
  stack_.push_back({false});
}

void JsonWriter::end_object() {
  if (stack_.empty() || !stack_.back().is_object || have_key_) throw std::logic_error("JsonWriter: misplaced end_object");
  bool empty = stack_.back().empty;
  stack_.pop_back();
  if (!empty) newline_indent();
  out_.push_back('}');
  if (stack_.empty()) out_.push_back('\n');
}

void JsonWriter::end_array() {
  if (stack_.empty() || stack_.back().is_object) throw std::logic_error("JsonWriter: misplaced end_array");
  bool empty = stack_.back().empty;
  stack_.pop_back();
  if (!empty) newline_indent();
  out_.push_back(']');
  if (stack_.empty()) out_.push_back('\n');
}

void JsonWriter::value(std::string_view s) {
  before_value();
  append_json_string(out_, s);
}

void JsonWriter::value(int64_t v) {
  before_value();
  out_ += fmt::format("{}", v);
}

void JsonWriter::value(uint64_t v) {
  before_value();
  out_ += fmt::format("{}", v);
}

void JsonWriter::value(bool b) {
  before_value();
  out_ += b ? "true" : "false";
}

void JsonWriter::value(double v, int decimals) {
  before_value();
  out_ += json_number(v, decimals);
}

void JsonWriter::number_text(std::string_view text) {
  before_value();
  if (text.empty())
    out_ += "null";
  else
    out_.append(text);
}

void JsonWriter::null() {
  before_value();
  out_ += "null";
}

}  // namespace schedlab

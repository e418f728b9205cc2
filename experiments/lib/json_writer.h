// A small JSON writer for reports: pretty-printed with two-space indents,
// keys in the order written, numbers formatted by the caller's fixed
// precision, so equal input gives byte-identical output. No dependency.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace schedlab {

// Appends `s` to `out` as a JSON string literal (with quotes). Escapes '"',
// '\\' and control characters; bytes that are not valid UTF-8 become U+FFFD
// so the output is always valid JSON.
void append_json_string(std::string& out, std::string_view s);
std::string json_quote(std::string_view s);

// Fixed-point text for a double ("{:.Nf}"); -0 prints as 0 and NaN/inf as
// null (JSON has no spelling for them).
std::string json_number(double v, int decimals);

class JsonWriter {
 public:
  void begin_object();
  void end_object();
  void begin_array();
  void end_array();
  // Inside an object: the next value's key.
  JsonWriter& key(std::string_view k);
  void value(std::string_view s);
  void value(const char* s) { value(std::string_view(s)); }
  void value(const std::string& s) { value(std::string_view(s)); }
  void value(int64_t v);
  void value(uint64_t v);
  void value(int v) { value(static_cast<int64_t>(v)); }
  void value(bool b);
  void value(double v, int decimals);
  void null();
  // A number already spelled (e.g. by report_format.h); empty text is null.
  void number_text(std::string_view text);
  // Shorthands for object members.
  template <typename T>
  void field(std::string_view k, const T& v) {
    key(k);
    value(v);
  }
  void field(std::string_view k, double v, int decimals) {
    key(k);
    value(v, decimals);
  }
  void number_field(std::string_view k, std::string_view text) {
    key(k);
    number_text(text);
  }
  // Under key `k`, an array of one object per item of `items`, whose
  // members `write(item)` writes.
  template <typename Items, typename Write>
  void object_array(std::string_view k, const Items& items, Write&& write) {
    key(k);
    begin_array();
    for (const auto& item : items) {
      begin_object();
      write(item);
      end_object();
    }
    end_array();
  }
  // The document so far; complete once every container is closed.
  const std::string& str() const { return out_; }
  bool complete() const { return stack_.empty() && started_; }

 private:
  void before_value();
  void newline_indent();
  struct Level {
    bool is_object;
    bool empty = true;
  };
  std::string out_;
  std::vector<Level> stack_;
  bool have_key_ = false;
  bool started_ = false;
};

}  // namespace schedlab

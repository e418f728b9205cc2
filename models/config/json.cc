#include "models/config/json.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cstdlib>

#include "models/config/config.h"

namespace schedlab::json {
namespace {

// Nesting deeper than this is not an rt-app file; stop before the stack does.
constexpr int kMaxDepth = 200;

class Parser {
 public:
  Parser(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  Value document() {
    skip_blanks();
    if (at_end()) error("empty document (expected a JSON object)");
    Value v = value(0);
    skip_blanks();
    if (!at_end()) error(fmt::format("unexpected '{}' after the end of the JSON value", peek()));
    return v;
  }

 private:
  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }
  char peek_next() const { return pos_ + 1 < text_.size() ? text_[pos_ + 1] : '\0'; }

  void advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    ++pos_;
  }

  [[noreturn]] void error(const std::string& message) const { error_at(line_, column_, message); }
  [[noreturn]] void error_at(int line, int column, const std::string& message) const {
    throw ConfigError(source_, line, column, "", fmt::format("JSON syntax error: {}", message));
  }

  // Whitespace and comments, which rt-app files use freely.
  void skip_blanks() {
    while (!at_end()) {
      char c = peek();
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        advance();
      } else if (c == '/' && peek_next() == '/') {
        while (!at_end() && peek() != '\n') advance();
      } else if (c == '/' && peek_next() == '*') {
        skip_block_comment();
      } else {
        return;
      }
    }
  }

  void skip_block_comment() {
    int line = line_, column = column_;
    advance();
    advance();
    while (!(peek() == '*' && peek_next() == '/')) {
      if (at_end()) error_at(line, column, "unterminated /* comment");
      advance();
    }
    advance();
    advance();
  }

  void expect(char c, std::string_view context) {
    if (peek() != c) error(fmt::format("expected '{}' {}, got {}", c, context, found()));
    advance();
  }

  std::string found() const {
    if (at_end()) return "end of file";
    return fmt::format("'{}'", peek());
  }

  Value value(int depth) {
    if (depth > kMaxDepth) error("nesting too deep");
    Value v;
    v.line = line_;
    v.column = column_;
    char c = peek();
    if (c == '{') object(v, depth);
    else if (c == '[') array(v, depth);
    else if (c == '"') { v.type = Value::Type::kString; v.text = string(); }
    else if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) number(v);
    else if (std::isalpha(static_cast<unsigned char>(c))) literal(v);
    else error(fmt::format("expected a value, got {}", found()));
    return v;
  }

  void object(Value& v, int depth) {
    v.type = Value::Type::kObject;
    advance();  // {
    skip_blanks();
    while (peek() != '}') {
      if (peek() != '"') error(fmt::format("expected a quoted key or '}}', got {}", found()));
      Member m;
      m.line = line_;
      m.column = column_;
      m.key = string();
      skip_blanks();
      expect(':', fmt::format("after key \"{}\"", m.key));
      skip_blanks();
      m.value = value(depth + 1);
      v.members.push_back(std::move(m));
      if (!separator('}', fmt::format("after the value of \"{}\"", v.members.back().key))) break;
    }
    expect('}', "to close the object");
  }

  void array(Value& v, int depth) {
    v.type = Value::Type::kArray;
    advance();  // [
    skip_blanks();
    while (peek() != ']') {
      v.items.push_back(value(depth + 1));
      if (!separator(']', "after an array element")) break;
    }
    expect(']', "to close the array");
  }

  // After a member or element: a comma (a trailing one is fine) or the closer.
  // Returns false when the closer follows directly.
  bool separator(char closer, const std::string& context) {
    skip_blanks();
    if (peek() == ',') {
      advance();
      skip_blanks();
      return true;
    }
    if (peek() != closer) error(fmt::format("expected ',' or '{}' {}, got {}", closer, context, found()));
    return false;
  }

  void literal(Value& v) {
    size_t start = pos_;
    while (!at_end() && std::isalpha(static_cast<unsigned char>(peek()))) advance();
    std::string_view word = text_.substr(start, pos_ - start);
    if (word == "true" || word == "false") {
      v.type = Value::Type::kBool;
      v.boolean = word == "true";
    } else if (word != "null") {
      error_at(v.line, v.column,
               fmt::format("unknown word '{}' (expected true, false, null or a quoted string)", word));
    }
  }

  void number(Value& v) {
    size_t start = pos_;
    bool is_float = false;
    if (peek() == '-') advance();
    if (!std::isdigit(static_cast<unsigned char>(peek()))) error(fmt::format("expected a digit, got {}", found()));
    while (std::isdigit(static_cast<unsigned char>(peek()))) advance();
    if (peek() == '.') {
      is_float = true;
      advance();
      while (std::isdigit(static_cast<unsigned char>(peek()))) advance();
    }
    if (peek() == 'e' || peek() == 'E') {
      is_float = true;
      advance();
      if (peek() == '+' || peek() == '-') advance();
      while (std::isdigit(static_cast<unsigned char>(peek()))) advance();
    }
    v.text = std::string(text_.substr(start, pos_ - start));
    v.number = std::strtod(v.text.c_str(), nullptr);
    if (is_float) {
      v.type = Value::Type::kDouble;
      return;
    }
    v.type = Value::Type::kInt;
    auto [end, ec] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), v.integer);
    if (ec != std::errc() || end != v.text.data() + v.text.size())
      error_at(v.line, v.column, fmt::format("integer {} is out of range", v.text));
  }

  std::string string() {
    int line = line_, column = column_;
    advance();  // opening quote
    std::string out;
    while (peek() != '"') {
      if (at_end() || peek() == '\n') error_at(line, column, "unterminated string");
      if (peek() == '\\') {
        escape(out);
      } else {
        out += peek();
        advance();
      }
    }
    advance();  // closing quote
    return out;
  }

  void escape(std::string& out) {
    advance();  // backslash
    char c = peek();
    if (at_end()) error("unterminated escape");
    advance();
    switch (c) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': append_utf8(out, hex4()); break;
      default: error(fmt::format("unknown escape '\\{}'", c));
    }
  }

  unsigned hex4() {
    unsigned code = 0;
    for (int i = 0; i < 4; ++i) {
      char c = peek();
      if (!std::isxdigit(static_cast<unsigned char>(c))) error("expected 4 hex digits after \\u");
      int digit = std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : std::tolower(c) - 'a' + 10;
      code = code * 16 + static_cast<unsigned>(digit);
      advance();
    }
    return code;
  }

  // Surrogate pairs are not joined: names in rt-app files are ASCII.
  static void append_utf8(std::string& out, unsigned code) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  std::string_view text_;
  const std::string& source_;
  size_t pos_ = 0;
  int line_ = 1, column_ = 1;
};

}  // namespace

const Value* Value::find(std::string_view key) const {
  const Value* found = nullptr;
  for (const Member& m : members)
    if (m.key == key) found = &m.value;
  return found;
}

const char* describe(Value::Type type) {
  switch (type) {
    case Value::Type::kNull: return "null";
    case Value::Type::kBool: return "a boolean";
    case Value::Type::kInt: return "an integer";
    case Value::Type::kDouble: return "a fractional number";
    case Value::Type::kString: return "a string";
    case Value::Type::kArray: return "an array";
    case Value::Type::kObject: return "an object";
  }
  return "?";
}

Value parse(std::string_view text, const std::string& source) {
  // A UTF-8 byte order mark, as some Windows editors write (RFC 8259 lets a
  // parser ignore it; the YAML loader does too).
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  return Parser(text, source).document();
}

}  // namespace schedlab::json

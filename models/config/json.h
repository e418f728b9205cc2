// A small tolerant JSON reader for rt-app files. rt-app's own reader
// (json-c) and its workgen preprocessor accept /* */ and // comments,
// trailing commas and repeated keys ("run" twice in a phase), so this one
// does too. The tree keeps object members in file order, keeps duplicates,
// and records the 1-based line/column of every key and value for messages.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace schedlab::json {

struct Member;

struct Value {
  enum class Type { kNull, kBool, kInt, kDouble, kString, kArray, kObject };

  Type type = Type::kNull;
  bool boolean = false;
  int64_t integer = 0;           // kInt
  double number = 0;             // kDouble, and kInt as a double
  std::string text;              // kString contents; for numbers, the literal as written
  std::vector<Value> items;      // kArray
  std::vector<Member> members;   // kObject, in file order, duplicates kept
  int line = 0, column = 0;      // where the value starts

  bool is(Type t) const { return type == t; }
  // The last member called `key`, as json-c keeps the last of duplicates; nullptr if none.
  const Value* find(std::string_view key) const;
};

struct Member {
  std::string key;
  int line = 0, column = 0;  // where the key starts
  Value value;
};

// "an object", "a string", ...: for "expected X, got Y" messages.
const char* describe(Value::Type type);

// Parses a whole document; a syntax error throws schedlab::ConfigError
// naming `source`, the line and the column.
Value parse(std::string_view text, const std::string& source);

}  // namespace schedlab::json

// Helpers shared by the YAML area loaders: YAML node -> typed value with
// range checks, mapping key validation against declarations, and
// ConfigError construction from yaml-cpp marks.
#pragma once

#include "sim/names.h"

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/config/diagnostics.h"
#include "models/config/params.h"
#include "sim/time.h"

namespace schedlab::config {

// Where a YAML document came from, and where non-fatal findings go.
struct YamlDoc {
  std::string file;
  std::vector<ConfigWarning>* warnings = nullptr;
};

// Throws ConfigError at `at`'s position (yaml-cpp marks are 0-based).
[[noreturn]] void fail(const YamlDoc& doc, const YAML::Node& at, const std::string& path,
                       const std::string& message);
void warn(const YamlDoc& doc, const YAML::Node& at, const std::string& path, const std::string& message);
// `at`'s place as fail() and warn() name it, without a message: "file:line:col: path".
std::string location(const YamlDoc& doc, const YAML::Node& at, const std::string& path);

std::string child_path(const std::string& parent, std::string_view key);  // "kernel" + "hz"
std::string index_path(const std::string& parent, size_t index);          // "tasks" + 2
std::string join(const std::vector<std::string>& items, std::string_view sep = ", ");
// closest_name(), did_you_mean() for messages (sim/names.h).
using schedlab::closest_name;
using schedlab::did_you_mean;
// "a map", "a sequence", "an empty value", "'text'": for "expected X, got Y".
std::string describe_node(const YAML::Node& node);

// A YAML document; a syntax error is a ConfigError in `name` with its line and column.
YAML::Node parse_yaml_document(std::string_view text, const std::string& name);
// A whole file; ConfigError `unreadable` (in `path`) if it cannot be opened.
std::string read_text_file(const std::string& path, const std::string& unreadable = "cannot read file");
// Ends in .json, in any case: an rt-app file rather than a YAML scenario.
bool is_json_path(const std::string& path);

enum class Bound { kAny, kNonNegative, kPositive };

int64_t as_int(const YamlDoc& doc, const YAML::Node& node, const std::string& path, int64_t lo, int64_t hi);
uint64_t as_uint(const YamlDoc& doc, const YAML::Node& node, const std::string& path);
bool as_bool(const YamlDoc& doc, const YAML::Node& node, const std::string& path);
std::string as_string(const YamlDoc& doc, const YAML::Node& node, const std::string& path);
Time as_duration(const YamlDoc& doc, const YAML::Node& node, const std::string& path,
                 Bound bound = Bound::kNonNegative);
// The scalar's text exactly as written, which must be one of `choices`.
std::string as_choice(const YamlDoc& doc, const YAML::Node& node, const std::string& path,
                      const std::vector<std::string>& choices);

// A YAML mapping checked against its declarations on construction: a
// non-map, a duplicate key or an undeclared key is an error that lists the
// valid keys. An empty value (`kernel:`) reads as an empty map.
class MapReader {
 public:
  MapReader(const YamlDoc& doc, const YAML::Node& node, std::string path,
            const std::vector<ParamDecl>& decls);

  std::optional<YAML::Node> find(std::string_view key) const;
  bool has(std::string_view key) const { return find(key).has_value(); }
  std::string path(std::string_view key) const { return child_path(path_, key); }
  const std::string& path() const { return path_; }
  const YAML::Node& node() const { return node_; }
  const YamlDoc& doc() const { return doc_; }
  // Fails at the mapping itself, e.g. for a missing required key.
  [[noreturn]] void fail_here(const std::string& message) const;
  void require(std::string_view key) const;

  // Typed reads: `out` is left untouched when the key is absent.
  void read(std::string_view key, int& out, int64_t lo, int64_t hi) const;
  void read(std::string_view key, int64_t& out, int64_t lo, int64_t hi) const;
  void read(std::string_view key, uint64_t& out) const;
  void read(std::string_view key, bool& out) const;
  void read(std::string_view key, std::string& out) const;
  void read(std::string_view key, Time& out, Bound bound = Bound::kNonNegative) const;
  void read(std::string_view key, std::optional<Time>& out, Bound bound = Bound::kNonNegative) const;
  void read(std::string_view key, std::optional<bool>& out) const;
  void read_choice(std::string_view key, std::string& out, const std::vector<std::string>& choices) const;

 private:
  struct Entry {
    std::string key;
    YAML::Node value;
  };
  const YamlDoc& doc_;
  YAML::Node node_;
  std::string path_;
  std::vector<Entry> entries_;
};

// "6.12" -> 612, so kernel versions compare as numbers ("6.6" < "6.12").
int version_number(const std::string& version);

}  // namespace schedlab::config

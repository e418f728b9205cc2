#include "models/config/yaml_util.h"

#include <yaml-cpp/depthguard.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <sstream>
#include <vector>

#include "models/config/config.h"
#include "models/config/diagnostics.h"

namespace schedlab::config {
namespace {

// yaml-cpp marks are 0-based and null (-1) for synthesized nodes.
std::pair<int, int> position_of(const YAML::Node& node) {
  YAML::Mark m = node.Mark();
  if (m.is_null() || m.line < 0) return {0, 0};
  return {m.line + 1, m.column + 1};
}

// Scalar text, or an error saying what kind of value was expected instead.
const std::string& scalar_text(const YamlDoc& doc, const YAML::Node& node, const std::string& path,
                               std::string_view expected) {
  if (!node.IsScalar()) fail(doc, node, path, fmt::format("expected {}, got {}", expected, describe_node(node)));
  return node.Scalar();
}

template <typename Int>
std::optional<Int> parse_integer(std::string_view text) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  Int value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

}  // namespace

void fail(const YamlDoc& doc, const YAML::Node& at, const std::string& path, const std::string& message) {
  auto [line, column] = position_of(at);
  throw ConfigError(doc.file, line, column, path, message);
}

void warn(const YamlDoc& doc, const YAML::Node& at, const std::string& path, const std::string& message) {
  if (doc.warnings == nullptr) return;
  auto [line, column] = position_of(at);
  doc.warnings->push_back({doc.file, line, column, path, message});
}

std::string location(const YamlDoc& doc, const YAML::Node& at, const std::string& path) {
  auto [line, column] = position_of(at);
  return format_location(doc.file, line, column, path);
}

std::string child_path(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : fmt::format("{}.{}", parent, key);
}

std::string index_path(const std::string& parent, size_t index) { return fmt::format("{}[{}]", parent, index); }

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += sep;
    out += item;
  }
  return out;
}

std::string describe_node(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: return "a map";
    case YAML::NodeType::Sequence: return node.size() == 0 ? "an empty sequence" : "a sequence";
    case YAML::NodeType::Null: return "an empty value";
    case YAML::NodeType::Scalar: return fmt::format("'{}'", node.Scalar());
    default: return "nothing";
  }
}

YAML::Node parse_yaml_document(std::string_view text, const std::string& name) {
  try {
    std::vector<YAML::Node> docs = YAML::LoadAll(std::string(text));
    // One file, one document: a second one ('---') would be silently
    // ignored, and whatever it says would not happen.
    if (docs.size() > 1) {
      const YAML::Mark at = docs[1].Mark();
      throw ConfigError(name, at.is_null() ? 0 : at.line + 1, at.is_null() ? 0 : at.column + 1, "",
                        "a second YAML document ('---'): a file holds one configuration (merge the documents, or "
                        "use one file each)");
    }
    return docs.empty() ? YAML::Node() : docs.front();
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp stops at a fixed depth (DepthGuard) with the message "bad
    // file", which reads as an unreadable file.
    throw ConfigError(name, e.mark.is_null() ? 0 : e.mark.line + 1, e.mark.is_null() ? 0 : e.mark.column + 1, "",
                      "YAML nested too deeply: yaml-cpp stops past its depth limit of [ ], { } and indented blocks (a "
                      "configuration needs a handful of levels)");
  } catch (const YAML::Exception& e) {
    // e.mark is 0-based like Node::Mark(); e.msg is the bare description.
    int line = e.mark.is_null() ? 0 : e.mark.line + 1;
    int column = e.mark.is_null() ? 0 : e.mark.column + 1;
    throw ConfigError(name, line, column, "", fmt::format("YAML syntax error: {}", e.msg));
  }
}

std::string read_text_file(const std::string& path, const std::string& unreadable) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path, 0, 0, "", unreadable);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool is_json_path(const std::string& path) {
  if (path.size() < 5) return false;
  std::string tail = path.substr(path.size() - 5);
  for (char& c : tail) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return tail == ".json";
}

int64_t as_int(const YamlDoc& doc, const YAML::Node& node, const std::string& path, int64_t lo, int64_t hi) {
  const std::string& text = scalar_text(doc, node, path, "an integer");
  auto value = parse_integer<int64_t>(text);
  if (!value) fail(doc, node, path, fmt::format("expected an integer, got '{}'", text));
  if (*value < lo || *value > hi)
    fail(doc, node, path, fmt::format("{} is out of range (expected {}..{})", *value, lo, hi));
  return *value;
}

uint64_t as_uint(const YamlDoc& doc, const YAML::Node& node, const std::string& path) {
  const std::string& text = scalar_text(doc, node, path, "a non-negative integer");
  auto value = parse_integer<uint64_t>(text);
  if (!value) fail(doc, node, path, fmt::format("expected a non-negative integer, got '{}'", text));
  return *value;
}

bool as_bool(const YamlDoc& doc, const YAML::Node& node, const std::string& path) {
  const std::string& text = scalar_text(doc, node, path, "true or false");
  // YAML 1.2 core schema only: yes/no/on/off are YAML 1.1 and read as strings elsewhere.
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  fail(doc, node, path, fmt::format("expected true or false, got '{}'", text));
}

std::string as_string(const YamlDoc& doc, const YAML::Node& node, const std::string& path) {
  return scalar_text(doc, node, path, "a string");
}

Time as_duration(const YamlDoc& doc, const YAML::Node& node, const std::string& path, Bound bound) {
  const std::string& text = scalar_text(doc, node, path, "a duration with a unit (e.g. 3ms, 750us)");
  std::string why;
  std::optional<Time> t = parse_duration(text, &why);
  if (!t) fail(doc, node, path, why);
  if (bound == Bound::kNonNegative && *t < Time::zero())
    fail(doc, node, path, fmt::format("'{}' is negative (expected a duration >= 0)", text));
  if (bound == Bound::kPositive && *t <= Time::zero())
    fail(doc, node, path, fmt::format("'{}' is not positive (expected a duration > 0)", text));
  return *t;
}

std::string as_choice(const YamlDoc& doc, const YAML::Node& node, const std::string& path,
                      const std::vector<std::string>& choices) {
  std::string expected = fmt::format("one of: {}", join(choices));
  const std::string& text = scalar_text(doc, node, path, expected);
  if (std::find(choices.begin(), choices.end(), text) == choices.end())
    fail(doc, node, path,
         fmt::format("'{}' is not valid (expected {}){}", text, expected, did_you_mean(text, choices)));
  return text;
}

MapReader::MapReader(const YamlDoc& doc, const YAML::Node& node, std::string path,
                     const std::vector<ParamDecl>& decls)
    : doc_(doc), node_(node), path_(std::move(path)) {
  std::vector<std::string> valid;
  for (const ParamDecl& d : decls) valid.push_back(d.key);
  if (node.IsNull()) return;
  if (!node.IsMap())
    fail(doc, node, path_, fmt::format("expected a map with keys {}, got {}", join(valid), describe_node(node)));
  for (auto it = node.begin(); it != node.end(); ++it) {
    // Copies: the iterator hands out a temporary pair whose members die with it.
    const YAML::Node key = it->first;
    if (!key.IsScalar()) fail(doc, key, path_, fmt::format("keys must be plain names, got {}", describe_node(key)));
    const std::string& name = key.Scalar();
    std::string key_path = child_path(path_, name);
    if (std::find(valid.begin(), valid.end(), name) == valid.end())
      fail(doc, key, key_path,
           fmt::format("unknown key '{}' (valid keys here: {}){}", name, join(valid), did_you_mean(name, valid)));
    // yaml-cpp keeps duplicate keys and lookups return the first; say so instead.
    if (find(name)) fail(doc, key, key_path, fmt::format("duplicate key '{}'", name));
    entries_.push_back({name, it->second});
  }
}

std::optional<YAML::Node> MapReader::find(std::string_view key) const {
  for (const Entry& e : entries_)
    if (e.key == key) return e.value;
  return std::nullopt;
}

void MapReader::fail_here(const std::string& message) const { fail(doc_, node_, path_, message); }

void MapReader::require(std::string_view key) const {
  if (!has(key)) fail_here(fmt::format("missing required key '{}'", key));
}

void MapReader::read(std::string_view key, int& out, int64_t lo, int64_t hi) const {
  if (auto n = find(key)) out = static_cast<int>(as_int(doc_, *n, path(key), lo, hi));
}

void MapReader::read(std::string_view key, int64_t& out, int64_t lo, int64_t hi) const {
  if (auto n = find(key)) out = as_int(doc_, *n, path(key), lo, hi);
}

void MapReader::read(std::string_view key, uint64_t& out) const {
  if (auto n = find(key)) out = as_uint(doc_, *n, path(key));
}

void MapReader::read(std::string_view key, bool& out) const {
  if (auto n = find(key)) out = as_bool(doc_, *n, path(key));
}

void MapReader::read(std::string_view key, std::optional<bool>& out) const {
  if (auto n = find(key)) out = as_bool(doc_, *n, path(key));
}

void MapReader::read(std::string_view key, std::string& out) const {
  if (auto n = find(key)) out = as_string(doc_, *n, path(key));
}

void MapReader::read(std::string_view key, Time& out, Bound bound) const {
  if (auto n = find(key)) out = as_duration(doc_, *n, path(key), bound);
}

void MapReader::read(std::string_view key, std::optional<Time>& out, Bound bound) const {
  if (auto n = find(key)) out = as_duration(doc_, *n, path(key), bound);
}

void MapReader::read_choice(std::string_view key, std::string& out, const std::vector<std::string>& choices) const {
  if (auto n = find(key)) out = as_choice(doc_, *n, path(key), choices);
}

int version_number(const std::string& version) {
  int major = 0, minor = 0;
  auto dot = version.find('.');
  std::from_chars(version.data(), version.data() + version.size(), major);
  if (dot != std::string::npos) std::from_chars(version.data() + dot + 1, version.data() + version.size(), minor);
  return major * 100 + minor;
}

}  // namespace schedlab::config

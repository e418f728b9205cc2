// Overlays on a scenario's YAML tree (see overlay.h for the grammar).
//
// Validation happens twice, on purpose. Walking the path checks each map
// key against the declarations of its level (params.h: the same tables the
// loaders read and the reference is rendered from), so a typo fails with
// the valid keys of that level and the experiment file's position. The
// modified tree then goes through the ordinary typed loader, which checks
// values, ranges and cross-field rules; an error it raises inside an
// overlaid subtree is re-attributed to the overlay that put it there.
#include "models/config/overlay.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <optional>

#include "models/config/config.h"
#include "models/config/feature_names.h"
#include "models/config/params.h"
#include "models/config/yaml_loaders.h"
#include "models/config/yaml_util.h"

namespace schedlab {
namespace config {
namespace {

[[noreturn]] void fail_at(const Overlay& ov, const std::string& message) {
  throw ConfigError(ov.origin.file, ov.origin.line, ov.origin.column, ov.path, message);
}

std::vector<std::string> keys_of(const std::vector<ParamDecl>& decls) {
  std::vector<std::string> keys;
  for (const ParamDecl& d : decls) keys.push_back(d.key);
  return keys;
}

// The keys a level of the scenario tree may hold, from the loaders'
// declarations; nullopt for a level without one (the typed loader still
// validates it). `schema` names list elements with "[]": "tasks[].events[]".
std::optional<std::vector<std::string>> declared_keys(const std::string& schema) {
  if (schema == "kernel.features") return known_sched_features();
  // Events live in several lists (tasks[].events, tasks[].phases[].events)
  // and carry their own value maps.
  if (schema.ends_with("events[]")) return keys_of(event_params());
  if (schema.ends_with("events[].timer")) return keys_of(timer_params());
  if (schema.ends_with("events[].wait")) return keys_of(wait_params());
  for (const ParamSection& section : yaml_schema()) {
    const std::string path = section.path == "(top level)" ? std::string() : section.path;
    if (path == schema) return keys_of(*section.params);
  }
  return std::nullopt;
}

std::string level_name(const std::string& canonical) { return canonical.empty() ? "the top level" : "'" + canonical + "'"; }

std::optional<size_t> as_index(const std::string& s) {
  size_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

// The element of `seq` that `selector` names (an index or a `name` value).
size_t select_element(const Overlay& ov, const YAML::Node& seq, const std::string& selector,
                      const std::string& canonical) {
  if (selector == "+")
    fail_at(ov, fmt::format("[+] appends to a list directly under a key (e.g. tasks[+]), not to '{}'", canonical));
  if (!seq.IsSequence())
    fail_at(ov, fmt::format("'{}' is {}, not a list: [{}] selects list elements", canonical, describe_node(seq),
                            selector));
  if (auto index = as_index(selector)) {
    if (*index >= seq.size())
      fail_at(ov, fmt::format("index {} is out of range: '{}' has {} element{} (valid: 0..{})", *index, canonical,
                              seq.size(), seq.size() == 1 ? "" : "s", seq.size() == 0 ? 0 : seq.size() - 1));
    return *index;
  }
  std::vector<std::string> names;
  for (size_t i = 0; i < seq.size(); ++i) {
    const YAML::Node element = seq[i];
    if (!element.IsMap()) continue;
    const YAML::Node name = element["name"];
    if (name && name.IsScalar()) {
      if (name.Scalar() == selector) return i;
      names.push_back(name.Scalar());
    }
  }
  if (names.empty())
    fail_at(ov, fmt::format("the elements of '{}' have no names: select one by index (0..{})", canonical,
                            seq.size() == 0 ? 0 : seq.size() - 1));
  fail_at(ov, fmt::format("no element named '{}' in '{}' (names: {}){}", selector, canonical, join(names),
                          did_you_mean(selector, names)));
}

YAML::Node parse_value(const Overlay& ov) {
  try {
    return YAML::Load(ov.value);
  } catch (const YAML::Exception& e) {
    fail_at(ov, fmt::format("the value '{}' is not valid YAML: {}", ov.value, e.msg));
  }
}

// What replacing map `old_value` by `new_value` (a map, or null) drops: the
// old keys the new value lacks, and a key of the new map worth naming in
// the advice (one it adds or changes, else its first).
DroppedKeys dropped_keys(const YAML::Node& old_value, const YAML::Node& new_value) {
  DroppedKeys out;
  if (!old_value.IsDefined() || !old_value.IsMap() || !(new_value.IsMap() || new_value.IsNull())) return out;
  out.by_null = new_value.IsNull();
  for (const auto& kv : old_value) {
    if (!kv.first.IsScalar()) continue;  // not a key the loaders accept: their error says so
    const std::string& key = kv.first.Scalar();
    if (new_value.IsNull() || !new_value[key].IsDefined()) out.keys.push_back(key);
  }
  if (out.keys.empty() || !new_value.IsMap()) return out;
  for (const auto& kv : new_value) {
    if (!kv.first.IsScalar()) continue;
    const std::string& key = kv.first.Scalar();
    if (out.suggested.empty()) out.suggested = key;
    const YAML::Node old_entry = old_value[key];
    if (!old_entry.IsDefined() || yaml_flow_text(old_entry) != yaml_flow_text(kv.second)) {
      out.suggested = key;
      break;
    }
  }
  return out;
}

// The node at a canonical path (map keys and list indices, as
// apply_overlay() returns them) in `root`, or an undefined node.
YAML::Node node_at(const YAML::Node& root, const std::string& canonical) {
  // Const lookups never insert keys; reset() rebinds the handle (operator=
  // would assign into the tree it refers to).
  YAML::Node cur;
  cur.reset(root);
  for (const PathSegment& seg : parse_key_path(canonical, SourcePos{})) {
    const YAML::Node& map = cur;
    if (!map.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
    const YAML::Node child = map[seg.key];
    if (!child.IsDefined()) return YAML::Node(YAML::NodeType::Undefined);
    cur.reset(child);
    for (const std::string& index : seg.selectors) {
      const YAML::Node& seq = cur;
      const auto k = as_index(index);
      if (!seq.IsSequence() || !k || *k >= seq.size()) return YAML::Node(YAML::NodeType::Undefined);
      const YAML::Node element = seq[*k];
      cur.reset(element);
    }
  }
  return cur;
}

// `prefix` equals `path` or is an ancestor of it ("tasks[0]" of "tasks[0].nice").
bool is_path_prefix(const std::string& prefix, const std::string& path) {
  if (prefix.empty() || path.size() < prefix.size() || path.compare(0, prefix.size(), prefix) != 0) return false;
  return path.size() == prefix.size() || path[prefix.size()] == '.' || path[prefix.size()] == '[';
}

}  // namespace

std::vector<PathSegment> parse_key_path(const std::string& path, const SourcePos& origin) {
  auto bad = [&](const std::string& why) -> std::vector<PathSegment> {
    throw ConfigError(origin.file, origin.line, origin.column, path,
                      fmt::format("malformed key path: {} (expected e.g. kernel.hz, tasks[ui].nice, tasks[0].cpus)",
                                  why));
  };
  std::vector<PathSegment> segments;
  size_t i = 0;
  if (path.empty()) return bad("it is empty");
  while (i <= path.size()) {
    PathSegment seg;
    size_t start = i;
    while (i < path.size() && path[i] != '.' && path[i] != '[' && path[i] != ']') ++i;
    seg.key = path.substr(start, i - start);
    if (seg.key.empty()) return bad(fmt::format("empty key at character {}", start + 1));
    if (std::any_of(seg.key.begin(), seg.key.end(), [](unsigned char c) { return std::isspace(c); }))
      return bad(fmt::format("key '{}' contains a blank", seg.key));
    while (i < path.size() && path[i] == '[') {
      size_t close = path.find(']', i);
      if (close == std::string::npos) return bad("'[' without ']'");
      std::string sel = path.substr(i + 1, close - i - 1);
      if (sel.empty()) return bad("empty selector []");
      seg.selectors.push_back(sel);
      i = close + 1;
    }
    if (auto plus = std::find(seg.selectors.begin(), seg.selectors.end(), "+");
        plus != seg.selectors.end() && plus != std::prev(seg.selectors.end()))
      return bad("[+] appends an element: it must be the path's last selector");
    segments.push_back(std::move(seg));
    if (i == path.size()) break;
    if (!segments.back().selectors.empty() && segments.back().selectors.back() == "+")
      return bad("[+] appends an element: it must end the path (set the whole element)");
    if (path[i] != '.') return bad(fmt::format("unexpected '{}' at character {}", path[i], i + 1));
    ++i;
    if (i == path.size()) return bad("it ends with '.'");
  }
  return segments;
}

std::string apply_overlay(YAML::Node& root, const Overlay& ov, DroppedKeys* dropped) {
  const std::vector<PathSegment> segments = parse_key_path(ov.path, ov.origin);
  YAML::Node cur(root);  // a handle: writes through it change `root`
  std::string canonical, schema;
  for (size_t s = 0; s < segments.size(); ++s) {
    const PathSegment& seg = segments[s];
    const bool last = s + 1 == segments.size();
    if (!cur.IsMap() && !cur.IsNull())
      fail_at(ov, fmt::format("{} is {}, not a map: it has no key '{}'", level_name(canonical), describe_node(cur),
                              seg.key));
    const YAML::Node& ccur = cur;  // const lookups never insert keys
    const bool exists = ccur.IsMap() && ccur[seg.key].IsDefined();
    if (auto valid = declared_keys(schema)) {
      if (std::find(valid->begin(), valid->end(), seg.key) == valid->end())
        fail_at(ov, fmt::format("unknown key '{}' at {} (valid keys here: {}){}", seg.key, level_name(canonical),
                                join(*valid), did_you_mean(seg.key, *valid)));
    }
    canonical = child_path(canonical, seg.key);
    schema = child_path(schema, seg.key);

    if (seg.selectors.empty()) {
      if (last) {
        YAML::Node value = parse_value(ov);
        // A list element (an event, a task) or the platform is an entity
        // swapped whole; a map under a key is a set of settings, where a
        // dropped key is more likely a surprise.
        if (dropped != nullptr && exists && canonical != "platform") *dropped = dropped_keys(ccur[seg.key], value);
        cur[seg.key] = value;
        return canonical;
      }
      // A declared (or undeclarable) key the base scenario leaves out: create it.
      if (!exists) cur[seg.key] = YAML::Node(YAML::NodeType::Map);
      YAML::Node next = cur[seg.key];
      cur.reset(next);
      continue;
    }
    if (last && seg.selectors == std::vector<std::string>{"+"}) {
      // Append: a new element at the end of the list (created if the level
      // declares it and the scenario leaves it out), e.g. a what-if's task.
      if (!exists) cur[seg.key] = YAML::Node(YAML::NodeType::Sequence);
      YAML::Node list = cur[seg.key];
      if (!list.IsSequence())
        fail_at(ov, fmt::format("'{}' is {}, not a list: [+] appends to lists", canonical, describe_node(list)));
      list.push_back(parse_value(ov));
      return index_path(canonical, list.size() - 1);
    }
    if (!exists)
      fail_at(ov, fmt::format("the scenario has no '{}' list to select [{}] from", canonical, seg.selectors[0]));
    YAML::Node holder = cur[seg.key];
    for (size_t k = 0; k < seg.selectors.size(); ++k) {
      const size_t index = select_element(ov, holder, seg.selectors[k], canonical);
      canonical = index_path(canonical, index);
      schema += "[]";
      if (last && k + 1 == seg.selectors.size()) {
        holder[index] = parse_value(ov);
        return canonical;
      }
      YAML::Node element = holder[index];
      holder.reset(element);
    }
    cur.reset(holder);
  }
  return canonical;
}

std::string yaml_flow_text(const YAML::Node& node) {
  YAML::Emitter out;
  out.SetMapFormat(YAML::Flow);
  out.SetSeqFormat(YAML::Flow);
  out << node;
  return out.c_str();
}

// Replaces a named or {file:} `platform` of `root` by its file's tree (the
// file's `name`, else its stem) for overlay `ov` to reach into; returns the
// file, or "" for an inline platform. A platform that cannot be loaded is
// the overlay's error.
std::string inline_platform_file(YAML::Node& root, const Overlay& ov, const std::string& name,
                                 const std::string& label) {
  const YAML::Node& croot = root;
  const YAML::Node platform = croot["platform"];
  if (!platform.IsDefined()) return {};
  std::string file;
  YAML::Node tree;
  try {
    file = platform_file(YamlDoc{name, nullptr}, platform, "platform");
    if (file.empty()) return {};
    tree = parse_yaml_document(read_text_file(file, "cannot read platform file"), file);
  } catch (const ConfigError& e) {
    throw ConfigError(ov.origin.file, ov.origin.line, ov.origin.column, ov.path,
                      fmt::format("cannot load the platform to apply this overlay to ({}): {}{}", name, e.what(),
                                  label.empty() ? "" : " (" + label + ")"));
  }
  if (tree.IsMap() && !tree["name"]) tree["name"] = std::filesystem::path(file).stem().string();
  root["platform"] = tree;
  return file;
}

// A scenario's tree (`text`, read from `name`) with `overlays` applied.
struct OverlaidScenario {
  YAML::Node root;
  std::vector<std::string> canonical;  // each overlay's canonical path (apply_overlay())
  std::vector<DroppedKeys> dropped;   // what each overlay's map dropped (apply_overlay())
  std::string inlined_platform;        // the platform file copied in, if any
};

OverlaidScenario apply_overlays(std::string_view text, const std::string& name, const std::vector<Overlay>& overlays,
                                const std::string& label) {
  OverlaidScenario out;
  out.root = parse_yaml_document(text, name);
  if (out.root.IsNull()) out.root = YAML::Node(YAML::NodeType::Map);
  if (!out.root.IsMap())
    throw ConfigError(name, 1, 1, "", fmt::format("expected a scenario map, got {}", describe_node(out.root)));
  out.canonical.reserve(overlays.size());
  out.dropped.reserve(overlays.size());
  // An overlay below `platform` on a platform named or given by file
  // (platform: gs101, platform: {file: ...}) first copies that file's tree
  // into the scenario, so `platform.clusters[big].rate_limit` overlays
  // reach the shipped platforms. Its nodes keep the file's line numbers:
  // a loader error among them is reported against that file.
  // (`platform.file` itself swaps the file: nothing to copy in.)
  for (const Overlay& ov : overlays) {
    if (is_platform_path(ov.path) && ov.path != "platform" && ov.path != "platform.file")
      if (std::string file = inline_platform_file(out.root, ov, name, label); !file.empty())
        out.inlined_platform = file;
    out.canonical.push_back(apply_overlay(out.root, ov, &out.dropped.emplace_back()));
  }
  return out;
}

}  // namespace config

bool is_platform_path(std::string_view path) {
  return path == "platform" || path.starts_with("platform.") || path.starts_with("platform[");
}

std::string scenario_platform_file(const std::string& path, const std::vector<Overlay>& overlays) {
  using namespace config;
  if (is_json_path(path)) return {};
  try {
    const OverlaidScenario s = apply_overlays(read_text_file(path), path, overlays, "");
    const YAML::Node& root = s.root;
    const YAML::Node platform = root["platform"];
    std::string file = platform.IsDefined() ? platform_file(YamlDoc{path, nullptr}, platform, "platform") : "";
    return file.empty() ? s.inlined_platform : file;
  } catch (const ConfigError&) {
    return {};  // loading the scenario reports it
  }
}

ScenarioParams load_scenario_yaml_with_overlays(std::string_view text, const std::string& name,
                                                const std::vector<Overlay>& overlays, const std::string& label) {
  using namespace config;
  const OverlaidScenario overlaid = apply_overlays(text, name, overlays, label);
  const YAML::Node& root = overlaid.root;
  const std::vector<std::string>& canonical = overlaid.canonical;
  const std::string& inlined_platform = overlaid.inlined_platform;
  try {
    ScenarioParams params = load_scenario_node(root, name);
    // A warning about an overlaid value is the overlay's, like an error
    // (its nodes' marks are positions in the overlay's value text, not
    // scenario lines: match on the key path alone).
    for (ConfigWarning& w : params.warnings) {
      if (w.file != name) continue;
      for (size_t i = overlays.size(); i-- > 0;)
        if (is_path_prefix(canonical[i], w.key_path)) {
          const Overlay& ov = overlays[i];
          w = {ov.origin.file, ov.origin.line, ov.origin.column, ov.path + w.key_path.substr(canonical[i].size()),
               fmt::format("{} (overlay {}={} on {}{})", w.message, ov.path, ov.value, name,
                           label.empty() ? "" : ", " + label)};
          break;
        }
    }
    // A map value replaces the whole map (overlay.h): say what that drops,
    // as a user who wanted one key changed (`kernel.features: {X: false}`
    // over a scenario's other features) would not see it otherwise.
    // Keys a later overlay put back are not dropped.
    for (size_t i = 0; i < overlays.size(); ++i) {
      const DroppedKeys& dropped = overlaid.dropped[i];
      if (dropped.keys.empty()) continue;
      const YAML::Node final_value = node_at(root, canonical[i]);
      std::vector<std::string> still_dropped;
      for (const std::string& key : dropped.keys)
        if (!final_value.IsMap() || !final_value[key].IsDefined()) still_dropped.push_back(key);
      if (still_dropped.empty()) continue;
      const Overlay& ov = overlays[i];
      params.warnings.push_back(
          {ov.origin.file, ov.origin.line, ov.origin.column, ov.path,
           fmt::format("this {} replaces the whole of '{}' on {}, dropping {} (set there by the scenario, its "
                       "platform file or an earlier overlay; to change a key and keep the rest, name it: {}.{})",
                       dropped.by_null ? "null" : "map", canonical[i], name, join(still_dropped), ov.path,
                       dropped.suggested.empty() ? "KEY" : dropped.suggested)});
    }
    return params;
  } catch (const ConfigError& e) {
    // An error inside (or above) an overlaid value is the overlay's: point at
    // the line that wrote it. The last overlay on a path wins, as in applying.
    for (size_t i = overlays.size(); i-- > 0;) {
      if (is_path_prefix(e.key_path(), canonical[i]) || is_path_prefix(canonical[i], e.key_path())) {
        const Overlay& ov = overlays[i];
        // Inside a compound value (a whole list or map set at once) the
        // key below the overlay's path still tells which entry is wrong.
        std::string key = ov.path;
        if (e.key_path().size() > canonical[i].size() && is_path_prefix(canonical[i], e.key_path()))
          key += e.key_path().substr(canonical[i].size());
        throw ConfigError(ov.origin.file, ov.origin.line, ov.origin.column, key,
                          fmt::format("{} (overlay {}={} on {}{})", e.message(), ov.path, ov.value, name,
                                      label.empty() ? "" : ", " + label));
      }
    }
    if (!inlined_platform.empty() && is_path_prefix("platform", e.key_path()))
      throw ConfigError(inlined_platform, e.line(), e.column(), e.key_path(),
                        fmt::format("{} (platform file, with the overlays of {}{})", e.message(), name,
                                    label.empty() ? "" : ", " + label));
    if (overlays.empty() || label.empty()) throw;
    throw ConfigError(e.file(), e.line(), e.column(), e.key_path(), fmt::format("{} (in {})", e.message(), label));
  }
}

ScenarioParams load_scenario_with_overlays(const std::string& path, const std::vector<Overlay>& overlays,
                                           const std::string& label) {
  if (config::is_json_path(path)) {
    if (!overlays.empty()) {
      const Overlay& ov = overlays.front();
      throw ConfigError(ov.origin.file, ov.origin.line, ov.origin.column, ov.path,
                        fmt::format("overlays apply to YAML scenarios; '{}' is an rt-app file (import it into a "
                                    "YAML scenario first)",
                                    path));
    }
    return load_scenario_file(path);
  }
  return load_scenario_yaml_with_overlays(config::read_text_file(path), path, overlays, label);
}

}  // namespace schedlab

// Overlays: key paths set on a scenario's YAML tree before typed loading,
// so variants, sweep points and compare all go through the one loader that
// validates scenarios (and every error keeps its usual precision).
//
// Key path grammar:   path     := segment ('.' segment)*
//                     segment  := key ('[' selector ']')*
//                     selector := integer index | the element's `name`
//                                 | '+' (append; only as the path's end,
//                                   the segment's one selector)
// e.g. kernel.hz, kernel.features.RUN_TO_PARITY, tasks[ui_main].nice,
// tasks[0].events[1].timer.period, tasks[+]. The value replaces whatever
// is at the path (a map value replaces the whole map, with a warning
// naming the keys it drops, except for a list element or the platform set
// whole); a missing map key is created when the level declares it
// (models/config/params.h), otherwise the overlay is an error that lists
// the valid keys at that level and points at the experiment file's line
// and column.
//
// Internal to models/config; experiments/ uses the entry points in config.h.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>
#include <vector>

#include "models/config/experiment_params.h"
#include "models/scenario.h"

namespace schedlab::config {

struct PathSegment {
  std::string key;
  std::vector<std::string> selectors;  // "[ui_main]" -> "ui_main", "[0]" -> "0"
};

// Splits a key path; a malformed path throws ConfigError at `origin`.
std::vector<PathSegment> parse_key_path(const std::string& path, const SourcePos& origin);

// What an overlay's map (or null) dropped from the map it replaced.
struct DroppedKeys {
  std::vector<std::string> keys;  // the old map's keys the new value lacks
  std::string suggested;          // a key of the new map to name in the advice ("" if none)
  bool by_null = false;           // the new value was null, not a map
};

// Applies `overlay` to `root` (modified in place). Returns the canonical
// path of what was set, with list elements by index ("tasks[0].nice"), the
// spelling the loaders use in their messages. When a map value replaces a
// map, `dropped` (if given) receives the old map's keys the new one lacks.
std::string apply_overlay(YAML::Node& root, const Overlay& overlay, DroppedKeys* dropped = nullptr);

// The typed loader of scenario_config.cc, from an already-parsed tree.
ScenarioParams load_scenario_node(const YAML::Node& root, const std::string& name);

// A YAML node as one line of flow-style text ("{a: 1, b: [x, y]}", "-5").
std::string yaml_flow_text(const YAML::Node& node);

}  // namespace schedlab::config

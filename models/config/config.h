// The only entry to text configuration: YAML scenarios and rt-app JSON files
// become typed ScenarioParams here, and nowhere else. Bad input raises
// ConfigError naming file, line, column, key path and what was expected.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "models/config/experiment_params.h"
#include "models/scenario.h"

namespace schedlab {

class ConfigError : public std::runtime_error {
 public:
  ConfigError(std::string file, int line, int column, std::string key_path, std::string message);
  const std::string& file() const { return file_; }
  int line() const { return line_; }      // 1-based; 0 when unknown
  int column() const { return column_; }  // 1-based; 0 when unknown
  const std::string& key_path() const { return key_path_; }
  const std::string& message() const { return message_; }

 private:
  std::string file_, key_path_, message_;
  int line_, column_;
};

// Loads a scenario file: *.json is read as rt-app, anything else as YAML.
ScenarioParams load_scenario_file(const std::string& path);
// The same from text (tests, overlays); `name` is used in messages.
ScenarioParams load_scenario_yaml(std::string_view text, const std::string& name);
ScenarioParams import_rtapp_json(std::string_view text, const std::string& name);

// A YAML scenario with overlays applied to its tree before loading
// (models/config/overlay.h: key path grammar and rules). Errors caused by an
// overlay point at the overlay's origin; `label` ("variant 'rtp_off'")
// is added to messages. An rt-app file takes no overlays.
ScenarioParams load_scenario_with_overlays(const std::string& path, const std::vector<Overlay>& overlays,
                                           const std::string& label = "");
ScenarioParams load_scenario_yaml_with_overlays(std::string_view text, const std::string& name,
                                                const std::vector<Overlay>& overlays, const std::string& label = "");
// The platform file the scenario at `path` loads with `overlays` applied
// (its named or {file:} platform, or the file an overlay below `platform`
// copied in); "" for an inline platform, an rt-app file, or a scenario that
// does not load (loading it says why). A sweep's key covers its text.
std::string scenario_platform_file(const std::string& path, const std::vector<Overlay>& overlays);
// Whether an overlay's key path is `platform` or below it: only such
// overlays can change which platform file a scenario loads.
bool is_platform_path(std::string_view path);

// Experiment files (configs/experiments/*.yaml, for `schedlab compare`) and
// sweep files (configs/sweeps/*.yaml, for `schedlab sweep`); the base
// scenario path is resolved against the file's directory. Every variant's
// overlays are checked against the scenario here, so a bad key path fails
// before anything runs.
ExperimentSpec load_experiment_file(const std::string& path);
ExperimentSpec load_sweep_file(const std::string& path);
// From text; `name` is the file name used in messages and to resolve the scenario.
ExperimentSpec load_experiment_yaml(std::string_view text, const std::string& name);
ExperimentSpec load_sweep_yaml(std::string_view text, const std::string& name);
// An overlay file (`--set-file`): a YAML map KEY.PATH: value, as an
// experiment's `set:`.
std::vector<Overlay> load_overlay_file(const std::string& path);
// Appends the overlays of `file` (load_overlay_file()) to e's common
// overlays, after the file's `set:` (a variant's own overlays and grid
// values still come later and win on the same key path), records the file
// in e.set_files, and tries every variant with them on the scenario.
void add_overlay_file(ExperimentSpec& e, const std::string& file);
// The experiment and sweep file reference (docs/experiments.md embeds it).
std::string experiment_schema_markdown();

// The YAML scenario reference (every key with unit, default and
// description) as Markdown tables, rendered from the loaders' declarations;
// configs/README.md embeds it.
std::string yaml_schema_markdown();

}  // namespace schedlab

// The only entry to text configuration: YAML scenarios and rt-app JSON files
// become typed ScenarioParams here, and nowhere else. Bad input raises
// ConfigError naming file, line, column, key path and what was expected.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

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

// The YAML scenario reference (every key with unit, default and
// description) as Markdown tables, rendered from the loaders' declarations;
// configs/README.md embeds it.
std::string yaml_schema_markdown();

}  // namespace schedlab

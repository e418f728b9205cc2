// Parameter declarations: every YAML key is declared once, with its unit,
// default and a one-line description (after SST's documented params). The
// loaders validate keys against these tables and the reference in
// configs/README.md is rendered from them, so the two cannot drift apart.
#pragma once

#include <string>
#include <vector>

namespace schedlab::config {

struct ParamDecl {
  std::string key;
  std::string unit;           // "duration", "int", "bool", "string", "a | b", "map", "list"
  std::string default_value;  // as written in YAML; "required" or "-" when there is none
  std::string description;    // one line
};

// One level of the YAML tree, e.g. "kernel.overheads" or "tasks[]".
struct ParamSection {
  std::string path;
  std::string summary;
  const std::vector<ParamDecl>* params;
};

// The declarations of each area (defined beside the loader that uses them).
const std::vector<ParamDecl>& scenario_params();    // top level
const std::vector<ParamDecl>& platform_params();    // platform
const std::vector<ParamDecl>& kernel_params();      // kernel
const std::vector<ParamDecl>& overhead_params();    // kernel.overheads
const std::vector<ParamDecl>& cpuidle_params();     // kernel.cpuidle
const std::vector<ParamDecl>& uclamp_params();      // kernel.uclamp
const std::vector<ParamDecl>& task_params();        // tasks[]
const std::vector<ParamDecl>& phase_params();       // tasks[].phases[]
const std::vector<ParamDecl>& event_params();       // one event: its kind is the key
const std::vector<ParamDecl>& timer_params();       // timer: {...}
const std::vector<ParamDecl>& wait_params();        // wait: {...}
const std::vector<ParamDecl>& uclamp_event_params();  // uclamp: {...}
const std::vector<ParamDecl>& setscheduler_event_params();  // setscheduler: {...}
const std::vector<ParamDecl>& setaffinity_event_params();   // setaffinity: {...}

// Every section in document order.
std::vector<ParamSection> yaml_schema();

// The Markdown reference (scenario_config.cc): one table of `decls`
// (key, type / unit, default, description), and each section as such a
// table under a "#### `path`: summary" heading.
std::string params_table_markdown(const std::vector<ParamDecl>& decls);
std::string sections_markdown(const std::vector<ParamSection>& sections);

}  // namespace schedlab::config

// platform: the machine. The foundation models identical CPUs at one
// capacity and frequency, so only the count and a label are configurable.
#include <fmt/format.h>

#include "models/config/yaml_loaders.h"

namespace schedlab::config {

constexpr int kMaxCpus = 256;

const std::vector<ParamDecl>& platform_params() {
  static const std::vector<ParamDecl> decls = {
      {"cpus", fmt::format("int 1..{}", kMaxCpus), std::to_string(PlatformParams{}.cpus),
       "number of identical CPUs (capacity 1024, one frequency)"},
      {"name", "string", PlatformParams{}.name, "label used in reports"},
  };
  return decls;
}

PlatformParams load_platform(const YamlDoc& doc, const YAML::Node& node, const std::string& path) {
  MapReader r(doc, node, path, platform_params());
  PlatformParams p;
  r.read("cpus", p.cpus, 1, kMaxCpus);
  r.read("name", p.name);
  return p;
}

}  // namespace schedlab::config

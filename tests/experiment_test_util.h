// Helpers shared by the experiment-engine and command-line tests
// (test_overlay.cc, test_compare.cc, test_sweep.cc, test_cli.cc,
// test_reports.cc): temporary folders, files, running the schedlab binary,
// comparing folders byte for byte, hand-made run metrics.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "models/metrics/run_result.h"

namespace schedlab::testing {

namespace fs = std::filesystem;

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_text(const fs::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
}

// A fresh directory, removed at the end.
struct ScratchDir {
  fs::path path;
  explicit ScratchDir(const std::string& name) {
    path = fs::temp_directory_path() / ("schedlab_test_exp_" + std::to_string(::getpid())) / name;
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~ScratchDir() {
    fs::remove_all(path);
    std::error_code ec;
    fs::remove(path.parent_path(), ec);  // the per-process folder, once empty
  }
  fs::path operator/(const std::string& name) const { return path / name; }
  // The names directly in the folder, sorted.
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(path)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
};

inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

struct Cli {
  int code = -1;
  std::string out, err;
};

// Runs `schedlab ARGS` (ARGS already shell-quoted where needed) with stdout
// and stderr captured in files beside `dir`, not in it, so that a test can
// check that a run left nothing in `dir`.
inline Cli run_schedlab(const ScratchDir& dir, const std::string& args) {
  static int counter = 0;
  const std::string stem = dir.path.filename().string() + ".cli" + std::to_string(++counter);
  const fs::path out = dir.path.parent_path() / (stem + ".out");
  const fs::path err = dir.path.parent_path() / (stem + ".err");
  const std::string cmd = shell_quote(SCHEDLAB_BINARY) + " " + args + " >" + shell_quote(out.string()) + " 2>" +
                          shell_quote(err.string()) + " </dev/null";
  const int status = std::system(cmd.c_str());
  Cli r;
  r.code = (status != -1 && WIFEXITED(status)) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  fs::remove(out);
  fs::remove(err);
  return r;
}

// Every regular file under `root`, by relative path, with its bytes.
inline std::map<std::string, std::string> folder_contents(const fs::path& root) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file()) files[fs::relative(e.path(), root).string()] = slurp(e.path());
  return files;
}

inline std::vector<std::string> file_names(const std::map<std::string, std::string>& files) {
  std::vector<std::string> names;
  for (const auto& [k, v] : files) names.push_back(k);
  return names;
}

// A task's metrics as a hand-made RunResult holds them.
inline TaskMetrics task_metrics(int pid, const std::string& name, const std::string& group,
                                const std::vector<int64_t>& latencies_ns, Time cpu_time) {
  TaskMetrics m;
  m.pid = pid;
  m.name = name;
  m.group = group;
  for (int64_t v : latencies_ns) m.wakeup_latency.add(v);
  m.wakeups = latencies_ns.size();
  m.cpu_time = cpu_time;
  return m;
}

inline CpuMetrics cpu_metrics(Time busy, Time idle, uint64_t switches) {
  CpuMetrics c;
  c.busy = busy;
  c.idle = idle;
  c.context_switches = switches;
  return c;
}

inline std::string repo_path(const std::string& rel) { return (fs::path(SCHEDLAB_SOURCE_DIR) / rel).string(); }

}  // namespace schedlab::testing

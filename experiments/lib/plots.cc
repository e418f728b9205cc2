#include "experiments/lib/plots.h"

#include <fmt/format.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

extern char** environ;

namespace schedlab {

namespace fs = std::filesystem;

std::string plots_dir() {
  if (const char* env = std::getenv("SCHEDLAB_PLOTS_DIR"); env && *env) return env;
  // CMake compiles with absolute source paths, so __FILE__ locates the
  // source tree; the scripts are not installed anywhere else.
  const fs::path here = fs::path(__FILE__).parent_path().parent_path() / "plots";
  std::error_code ec;
  if (fs::is_directory(here, ec)) return here.string();
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path beside = exe.parent_path().parent_path() / "experiments" / "plots";
    if (fs::is_directory(beside, ec)) return beside.string();
  }
  return here.string();
}

namespace {

// Runs argv (argv[0] looked up in PATH) and returns its exit status (-1 if
// it could not start or died of a signal). `quiet`: stdout and stderr go to
// /dev/null (probes).
int spawn_and_wait(std::vector<std::string> args, bool quiet = false) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (quiet) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  }
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The first interpreter that imports matplotlib: $SCHEDLAB_PYTHON, python3
// on PATH, then Debian's /usr/bin/python3 (python3-matplotlib installs
// there; a pyenv or venv python3 earlier on PATH may not have it).
std::string find_python() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("SCHEDLAB_PYTHON"); env && *env) candidates.push_back(env);
  candidates.push_back("python3");
  candidates.push_back("/usr/bin/python3");
  for (const std::string& py : candidates)
    if (spawn_and_wait({py, "-c", "import matplotlib"}, true) == 0) return py;
  throw std::runtime_error(
      "plots need python3 with matplotlib (Debian: apt-get install python3-matplotlib; or set SCHEDLAB_PYTHON)");
}

}  // namespace

void run_plot_script(const std::string& script, const std::vector<std::string>& args) {
  const std::string path = (fs::path(plots_dir()) / script).string();
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    throw std::runtime_error(fmt::format("plot script '{}' not found (set SCHEDLAB_PLOTS_DIR to experiments/plots)", path));
  std::vector<std::string> argv{find_python(), path};
  argv.insert(argv.end(), args.begin(), args.end());
  const int status = spawn_and_wait(argv);
  if (status != 0) throw std::runtime_error(fmt::format("plot script {} failed (exit status {})", script, status));
}

}  // namespace schedlab

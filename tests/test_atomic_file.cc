// Output files (experiments/lib/atomic_file.h) whose path is not a plain
// file: a symbolic link is written through to its target, a FIFO or a
// character device is written in place, never replaced, and a failed write
// is an error with the system's reason.
//
// The tests run as root in CI, where a rename over /dev/null or /dev/full
// would replace the device node. So the FIFO case runs first and must pass,
// and before any commit to a device the test requires that no temporary
// was created beside it (which is what a rename would need): on a broken
// AtomicFile the test stops there and the destructor removes the temporary.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "experiment_test_util.h"
#include "experiments/lib/atomic_file.h"

using namespace schedlab;
using namespace schedlab::testing;

namespace {

mode_t lstat_mode(const std::string& path) {
  struct stat st;
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_mode;
}

std::string temp_beside(const std::string& path) { return path + ".tmp-" + std::to_string(::getpid()); }

bool exists_no_follow(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

}  // namespace

TEST_CASE("an output path that is a symbolic link is written through to its target", "[atomic]") {
  const ScratchDir dir("atomic_symlink");
  const std::string target = (dir / "target.json").string(), link = (dir / "link.json").string();
  write_text(target, "old\n");
  std::filesystem::create_symlink("target.json", link);  // relative: resolved from the link's folder

  SECTION("an existing target is replaced atomically and the link stays a link") {
    {
      AtomicFile f(link);
      f.write("new\n");
      CHECK(f.temp_path() == temp_beside(target));
      CHECK(slurp(target) == "old\n");
      f.commit();
    }
    CHECK(S_ISLNK(lstat_mode(link)));
    CHECK(std::filesystem::read_symlink(link) == "target.json");
    CHECK(slurp(target) == "new\n");
    CHECK(dir.entries() == std::vector<std::string>{"link.json", "target.json"});
  }
  SECTION("a failed file leaves both the link and the target as they were") {
    {
      AtomicFile f(link);
      f.write("partial");
    }
    CHECK(S_ISLNK(lstat_mode(link)));
    CHECK(slurp(target) == "old\n");
    CHECK(dir.entries() == std::vector<std::string>{"link.json", "target.json"});
  }
  SECTION("a dangling link creates its target, through a chain of links") {
    std::filesystem::create_directory(dir / "sub");
    std::filesystem::create_symlink(dir / "sub" / "made.json", dir / "dangling");
    std::filesystem::create_symlink("dangling", dir / "chain");
    write_file_atomically((dir / "chain").string(), "made\n");
    CHECK(S_ISLNK(lstat_mode((dir / "chain").string())));
    CHECK(S_ISLNK(lstat_mode((dir / "dangling").string())));
    CHECK(slurp(dir / "sub" / "made.json") == "made\n");
  }
}

TEST_CASE("a FIFO or character device output is written in place and never replaced", "[atomic]") {
  const ScratchDir dir("atomic_special");
  const std::string fifo = (dir / "fifo").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // A reader opened first (O_NONBLOCK), so opening for writing does not wait.
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  REQUIRE(reader >= 0);
  {
    AtomicFile f(fifo);
    f.write("through the pipe\n");
    f.commit();
  }
  char buf[64] = {};
  const ssize_t n = ::read(reader, buf, sizeof buf);
  ::close(reader);
  // Only with the FIFO intact is it safe to go on to /dev/null.
  REQUIRE(S_ISFIFO(lstat_mode(fifo)));
  REQUIRE(dir.entries() == std::vector<std::string>{"fifo"});
  CHECK(std::string(buf, n > 0 ? static_cast<size_t>(n) : 0) == "through the pipe\n");

  SECTION("/dev/null") {
    REQUIRE(S_ISCHR(lstat_mode("/dev/null")));
    AtomicFile f("/dev/null");
    REQUIRE_FALSE(exists_no_follow(temp_beside("/dev/null")));
    f.write("discarded\n");
    f.commit();
    CHECK(S_ISCHR(lstat_mode("/dev/null")));
  }
  SECTION("a symbolic link to a FIFO") {
    std::filesystem::create_symlink("fifo", dir / "to_fifo");
    const int r = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
    REQUIRE(r >= 0);
    write_file_atomically((dir / "to_fifo").string(), "via link\n");
    const ssize_t m = ::read(r, buf, sizeof buf);
    ::close(r);
    CHECK(S_ISLNK(lstat_mode((dir / "to_fifo").string())));
    CHECK(S_ISFIFO(lstat_mode(fifo)));
    CHECK(std::string(buf, m > 0 ? static_cast<size_t>(m) : 0) == "via link\n");
  }
  SECTION("a failed write to /dev/full is an error with the reason, and /dev/full stays") {
    REQUIRE(S_ISCHR(lstat_mode("/dev/full")));
    AtomicFile f("/dev/full");
    REQUIRE_FALSE(exists_no_follow(temp_beside("/dev/full")));
    f.write(std::string(200000, 'x'));  // more than a buffer: some writes fail before commit()
    CHECK_THROWS_WITH(f.commit(), "cannot write '/dev/full': No space left on device");
    CHECK(S_ISCHR(lstat_mode("/dev/full")));
    AtomicFile g("/dev/full");
    REQUIRE_FALSE(exists_no_follow(temp_beside("/dev/full")));
    g.write("{}\n");  // buffered: fails at the flush in commit()
    CHECK_THROWS_WITH(g.commit(), "cannot write '/dev/full': No space left on device");
    CHECK(S_ISCHR(lstat_mode("/dev/full")));
  }
  SECTION("a directory is refused up front") {
    CHECK_THROWS_WITH(AtomicFile(dir.path.string()), Catch::Contains("Is a directory"));
    CHECK(dir.entries() == std::vector<std::string>{"fifo"});
  }
}

TEST_CASE("a path naming an open descriptor writes through it and keeps its mode", "[atomic_file]") {
  // `schedlab run x.yaml --json /dev/stdout >> log` must append to log, not
  // replace it: /dev/fd/N and /proc/self/fd/N name the descriptor the shell
  // opened, so the report goes through a copy of it.
  ScratchDir dir("atomic_file_descriptor");
  const std::string log = (dir / "log").string();
  write_file_atomically(log, "earlier\n");
  struct stat before;
  REQUIRE(::stat(log.c_str(), &before) == 0);
  const int fd = ::open(log.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  REQUIRE(fd >= 0);
  write_file_atomically("/dev/fd/" + std::to_string(fd), "via /dev/fd\n");
  write_file_atomically("/proc/self/fd/" + std::to_string(fd), "via /proc/self/fd\n");
  write_file_atomically("//dev/./fd/" + std::to_string(fd), "via //dev/./fd\n");
  write_file_atomically("/proc/" + std::to_string(::getpid()) + "/fd/" + std::to_string(fd), "via /proc/PID/fd\n");
  std::filesystem::create_symlink("/dev/fd/" + std::to_string(fd), dir / "link");
  write_file_atomically((dir / "link").string(), "via a link\n");
  std::filesystem::remove(dir / "link");
  ::close(fd);
  struct stat after;
  REQUIRE(::stat(log.c_str(), &after) == 0);
  CHECK(after.st_ino == before.st_ino);  // the same file, not one renamed over it
  CHECK(slurp(dir / "log") == "earlier\nvia /dev/fd\nvia /proc/self/fd\nvia //dev/./fd\nvia /proc/PID/fd\nvia a link\n");
  CHECK(dir.entries() == std::vector<std::string>{"log"});
  // A descriptor that is not open is an error with the reason.
  CHECK_THROWS_WITH(write_file_atomically("/dev/fd/987654", "x"), "cannot write '/dev/fd/987654': Bad file descriptor");
}

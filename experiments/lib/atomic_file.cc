#include "experiments/lib/atomic_file.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

namespace schedlab {
namespace {

// Temporaries the signal handler removes. A slot is claimed with a
// compare-and-swap (sweeps commit point files from several threads), its
// path written, and only then marked ready, so the handler (which may
// interrupt anything) only ever reads complete paths; lock-free atomic
// loads and unlink() are async-signal-safe.
constexpr int kSlots = 64;
constexpr size_t kMaxPath = 4096;
constexpr int kFree = 0, kClaimed = 1, kReady = 2;
char g_paths[kSlots][kMaxPath];
std::atomic<int> g_state[kSlots];
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler reads slot states");

int register_temp(const std::string& path) {
  if (path.size() >= kMaxPath) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (g_state[i].compare_exchange_strong(expected, kClaimed)) {
      std::memcpy(g_paths[i], path.c_str(), path.size() + 1);
      g_state[i].store(kReady);
      return i;
    }
  }
  return -1;  // more open files than slots: still atomic, just not cleaned on a signal
}

void unregister_temp(int slot) {
  if (slot >= 0) g_state[slot].store(kFree);
}

extern "C" void cleanup_and_reraise(int sig) {
  for (int i = 0; i < kSlots; ++i)
    if (g_state[i].load() == kReady) ::unlink(g_paths[i]);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

std::string errno_text(int err) { return err ? std::strerror(err) : "unknown error"; }

}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  if (path_.empty()) throw OutputError("output file name is empty");
  temp_path_ = fmt::format("{}.tmp-{}", path_, static_cast<long>(::getpid()));
  errno = 0;
  out_.open(temp_path_, std::ios::out | std::ios::trunc | std::ios::binary);
  if (!out_.is_open()) {
    int err = errno;
    throw OutputError(fmt::format("cannot write '{}': {}", path_, errno_text(err)));
  }
  slot_ = register_temp(temp_path_);
}

AtomicFile::~AtomicFile() {
  if (!committed_) abort();
}

void AtomicFile::finish() {
  if (finished_) return;
  if (committed_) throw OutputError(fmt::format("'{}' was already committed", path_));
  errno = 0;
  out_.flush();
  bool ok = !out_.fail();
  int err = errno;
  out_.close();
  if (!ok || out_.fail()) {
    if (!err) err = errno;
    abort();
    throw OutputError(fmt::format("cannot write '{}': {}", path_, errno_text(err)));
  }
  finished_ = true;
}

void AtomicFile::commit() {
  finish();
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    int err = errno;
    abort();
    throw OutputError(fmt::format("cannot write '{}': {}", path_, errno_text(err)));
  }
  committed_ = true;
  unregister_temp(slot_);
  slot_ = -1;
}

void AtomicFile::abort() noexcept {
  if (committed_) return;
  if (out_.is_open()) out_.close();
  std::remove(temp_path_.c_str());
  unregister_temp(slot_);
  slot_ = -1;
  finished_ = true;
}

void write_file_atomically(const std::string& path, std::string_view content) {
  AtomicFile f(path);
  f.write(content);
  f.commit();
}

void commit_all(const std::vector<AtomicFile*>& files) {
  try {
    for (AtomicFile* f : files) f->finish();
  } catch (...) {
    for (AtomicFile* f : files) f->abort();
    throw;
  }
  for (AtomicFile* f : files) f->commit();
}

void install_cleanup_signal_handlers() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) {
    struct sigaction sa {};
    sa.sa_handler = cleanup_and_reraise;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    sigaction(sig, &sa, nullptr);
  }
}

}  // namespace schedlab

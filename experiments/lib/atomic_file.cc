#include "experiments/lib/atomic_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <streambuf>

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

// The descriptor a path spells out, if it does (after lexical
// normalisation: //dev/stdout, /dev/./stdout): /dev/stdout, /dev/stderr,
// /dev/fd/N, /proc/self/fd/N, /proc/thread-self/fd/N, /proc/PID/fd/N with
// this process's PID.
std::optional<int> descriptor_spelled(const std::filesystem::path& path) {
  const std::string s = path.lexically_normal().string();
  if (s == "/dev/stdout") return 1;
  if (s == "/dev/stderr") return 2;
  const std::string own = fmt::format("/proc/{}/fd/", static_cast<long>(::getpid()));
  for (std::string_view prefix : {std::string_view("/dev/fd/"), std::string_view("/proc/self/fd/"),
                                  std::string_view("/proc/thread-self/fd/"), std::string_view(own)}) {
    if (s.size() <= prefix.size() || s.compare(0, prefix.size(), prefix) != 0) continue;
    int fd = 0;
    for (size_t i = prefix.size(); i < s.size(); ++i) {
      if (s[i] < '0' || s[i] > '9' || fd > 1000000) return std::nullopt;
      fd = fd * 10 + (s[i] - '0');
    }
    return fd;
  }
  return std::nullopt;
}

// The open descriptor a path names, if it names one: spelled out, or
// through symbolic links (a link to /dev/stdout). Writing through a copy of
// that descriptor keeps what the shell set up (`>>` appends, `>` writes
// from where the file stands); opening the path again would start at
// offset 0, and renaming a file over it would replace the file the shell
// opened.
std::optional<int> inherited_descriptor(const std::string& path) {
  std::filesystem::path p = path;
  for (int hops = 0; hops < 40; ++hops) {
    if (auto fd = descriptor_spelled(p)) return fd;
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return std::nullopt;
    std::error_code ec;
    const std::filesystem::path link = std::filesystem::read_symlink(p, ec);
    if (ec) return std::nullopt;
    p = link.is_absolute() ? link : p.parent_path() / link;
  }
  return std::nullopt;
}

// The file a write to `path` lands in: a symbolic link in the last component
// is followed (relative targets from the link's folder) until a non-link or
// a name that does not exist yet, which is the file to create.
std::string follow_symlinks(const std::string& path) {
  std::filesystem::path p = path;
  for (int hops = 0;; ++hops) {
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p.string();
    if (hops == 40) throw OutputError(fmt::format("cannot write '{}': {}", path, errno_text(ELOOP)));
    std::error_code ec;
    std::filesystem::path link = std::filesystem::read_symlink(p, ec);
    if (ec) throw OutputError(fmt::format("cannot write '{}': {}", path, ec.message()));
    p = link.is_absolute() ? link : p.parent_path() / link;
  }
}

}  // namespace

// std::ofstream reports a failed write only as a state bit, and by the time
// that is looked at errno may have been overwritten (or the write happened
// inside an earlier call), so ENOSPC came out as "unknown error". This
// buffer calls write(2) itself and keeps the first error.
class AtomicFile::Buffer : public std::streambuf {
 public:
  explicit Buffer(int fd) : fd_(fd) { setp(data_, data_ + sizeof data_); }
  ~Buffer() override { close(false); }

  // Writes what is buffered (unless `write_pending` is false: an aborted
  // file's reader gets no more) and closes; returns 0 or the first errno of
  // any write or of close(2).
  int close(bool write_pending = true) {
    if (fd_ >= 0) {
      if (write_pending) drain();
      // Linux closes the descriptor even when close() fails: no retry.
      if (::close(fd_) != 0 && !error_) error_ = errno ? errno : EIO;
      fd_ = -1;
    }
    return error_;
  }

 protected:
  int_type overflow(int_type ch) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  bool drain() {
    const char* p = pbase();
    size_t n = static_cast<size_t>(pptr() - pbase());
    setp(data_, data_ + sizeof data_);
    if (error_ || fd_ < 0) return false;
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        error_ = w < 0 ? errno : EIO;
        return false;
      }
      p += w;
      n -= static_cast<size_t>(w);
    }
    return true;
  }

  int fd_;
  int error_ = 0;
  char data_[1 << 16];
};

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)), out_(nullptr) {
  if (path_.empty()) throw OutputError("output file name is empty");
  const auto fail = [this](int err) { return OutputError(fmt::format("cannot write '{}': {}", path_, errno_text(err))); };
  int fd;
  struct stat st;
  if (const std::optional<int> inherited = inherited_descriptor(path_)) {
    target_ = path_;
    // What the program printed so far goes first (tables on stdout before
    // a report written to /dev/stdout).
    std::cout.flush();
    std::fflush(nullptr);
    fd = ::fcntl(*inherited, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) throw fail(errno);
    if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
      ::close(fd);
      throw fail(EISDIR);
    }
  } else if (::stat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    // A device or FIFO (also behind a link such as /dev/stdout): renaming a
    // file over it would replace the node, so write to it directly.
    if (S_ISDIR(st.st_mode)) throw fail(EISDIR);
    target_ = path_;
    do fd = ::open(path_.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) throw fail(errno);
  } else {
    target_ = follow_symlinks(path_);
    temp_path_ = fmt::format("{}.tmp-{}", target_, static_cast<long>(::getpid()));
    fd = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) throw fail(errno);
    slot_ = register_temp(temp_path_);
  }
  buf_ = std::make_unique<Buffer>(fd);
  out_.rdbuf(buf_.get());
}

AtomicFile::~AtomicFile() {
  if (!committed_) abort();
}

void AtomicFile::finish() {
  if (finished_) return;
  if (committed_) throw OutputError(fmt::format("'{}' was already committed", path_));
  out_.flush();
  const int err = buf_->close();
  if (err) {
    abort();
    throw OutputError(fmt::format("cannot write '{}': {}", path_, errno_text(err)));
  }
  finished_ = true;
}

void AtomicFile::commit() {
  finish();
  if (!in_place() && std::rename(temp_path_.c_str(), target_.c_str()) != 0) {
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
  if (buf_) buf_->close(false);
  if (!in_place()) std::remove(temp_path_.c_str());
  unregister_temp(slot_);
  slot_ = -1;
  finished_ = true;
}

bool names_open_descriptor(const std::string& path) { return inherited_descriptor(path).has_value(); }

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

// Output files that appear whole or not at all. Content goes to
// "FILE.tmp-<pid>" in the same directory and is renamed over FILE only on
// commit(), after everything was written and flushed; a file that is never
// committed (error, exception, early return) has its temporary removed by the
// destructor, and install_cleanup_signal_handlers() removes the temporaries
// of files still open when SIGINT/SIGTERM/SIGHUP/SIGPIPE arrive.
//
// What FILE names decides where the bytes go, as with a shell's '>':
//  - a symbolic link is followed: the temporary sits beside the link's final
//    target and is renamed over that target, so the link stays a link (a
//    dangling link names the file to create);
//  - an existing file that is not a regular file (a character device such as
//    /dev/null or a terminal, a FIFO) is written in place: no temporary, no
//    rename, since replacing it would destroy the device node or pipe. Such a
//    file cannot be "whole or not at all"; its reader may see part of the
//    content before an error.
// Every write, the flush and the close are checked; a failure is an
// OutputError with the system's reason ("No space left on device").
#pragma once

#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace schedlab {

// Writing an output file failed (open, write, close, rename). The CLI exits
// with 2, as for any other bad path on the command line.
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class AtomicFile {
 public:
  // Creates (truncates) the temporary file now, or opens the device or FIFO,
  // so an unwritable path fails before a long simulation rather than after
  // it. Opening a FIFO waits for its reader. Throws OutputError.
  explicit AtomicFile(std::string path);
  ~AtomicFile();  // removes the temporary unless committed
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ostream& stream() { return out_; }
  void write(std::string_view text) { out_.write(text.data(), static_cast<std::streamsize>(text.size())); }
  // Flushes, closes and checks the file (throws OutputError on any failure,
  // leaving no temporary behind). After finish() only commit() remains.
  void finish();
  // finish() if not yet done, then rename the temporary over the target.
  void commit();
  // Drops the temporary; the target is left untouched.
  void abort() noexcept;
  bool committed() const { return committed_; }
  const std::string& path() const { return path_; }
  // The file that receives the content: path() with symbolic links followed.
  const std::string& target() const { return target_; }
  // Empty when the file is written in place (a device or FIFO).
  const std::string& temp_path() const { return temp_path_; }
  bool in_place() const { return temp_path_.empty(); }

 private:
  class Buffer;  // a stream buffer over a file descriptor that keeps the first errno
  std::string path_, target_, temp_path_;
  std::unique_ptr<Buffer> buf_;
  std::ostream out_;
  int slot_ = -1;  // cleanup registry slot (signal handler)
  bool finished_ = false, committed_ = false;
};

// Writes `content` to `path` atomically (temp file + rename). Throws OutputError.
void write_file_atomically(const std::string& path, std::string_view content);

// Whether `path` names an open descriptor (/dev/stdout, /dev/fd/N, ...,
// or a link to one): AtomicFile then writes through it, in place.
bool names_open_descriptor(const std::string& path);

// Commits a set of files together: every file is finished (flushed, closed,
// checked) before the first rename, so a write error leaves none of them.
void commit_all(const std::vector<AtomicFile*>& files);

// SIGINT, SIGTERM, SIGHUP and SIGPIPE remove the temporaries of uncommitted
// AtomicFiles, then the signal takes its default action.
void install_cleanup_signal_handlers();

}  // namespace schedlab

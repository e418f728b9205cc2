// Output files that appear whole or not at all. Content goes to
// "FILE.tmp-<pid>" in the same directory and is renamed over FILE only on
// commit(), after everything was written and flushed; a file that is never
// committed (error, exception, early return) has its temporary removed by the
// destructor, and install_cleanup_signal_handlers() removes the temporaries
// of files still open when SIGINT/SIGTERM/SIGHUP/SIGPIPE arrive.
#pragma once

#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace schedlab {

// Writing an output file failed (open, write, rename). The CLI exits with 1.
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class AtomicFile {
 public:
  // Creates (truncates) the temporary file now, so an unwritable path fails
  // before a long simulation rather than after it. Throws OutputError.
  explicit AtomicFile(std::string path);
  ~AtomicFile();  // removes the temporary unless committed
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ostream& stream() { return out_; }
  void write(std::string_view text) { out_.write(text.data(), static_cast<std::streamsize>(text.size())); }
  // Flushes, closes and checks the temporary (throws OutputError on any
  // failure, leaving nothing behind). After finish() only commit() remains.
  void finish();
  // finish() if not yet done, then rename the temporary over path().
  void commit();
  // Drops the temporary; path() is left untouched.
  void abort() noexcept;
  bool committed() const { return committed_; }
  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_path_; }

 private:
  std::string path_, temp_path_;
  std::ofstream out_;
  int slot_ = -1;  // cleanup registry slot (signal handler)
  bool finished_ = false, committed_ = false;
};

// Writes `content` to `path` atomically (temp file + rename). Throws OutputError.
void write_file_atomically(const std::string& path, std::string_view content);

// Commits a set of files together: every file is finished (flushed, closed,
// checked) before the first rename, so a write error leaves none of them.
void commit_all(const std::vector<AtomicFile*>& files);

// SIGINT, SIGTERM, SIGHUP and SIGPIPE remove the temporaries of uncommitted
// AtomicFiles, then the signal takes its default action.
void install_cleanup_signal_handlers();

}  // namespace schedlab

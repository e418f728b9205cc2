#include <fmt/format.h>

#include "models/config/config.h"
#include "models/config/diagnostics.h"

namespace schedlab {
namespace config {

namespace {
std::string location_of(const std::string& file, int line, int column, const std::string& key_path) {
  std::string out = file.empty() ? std::string("<input>") : file;
  if (line > 0) {
    out += fmt::format(":{}", line);
    if (column > 0) out += fmt::format(":{}", column);
  }
  if (!key_path.empty()) out += ": " + key_path;
  return out;
}

// Names from the input may hold control characters: shown escaped, since
// a raw one would cut the message (NUL: what() is a C string) or garble
// the terminal (ESC). Line breaks and tabs of the message stay.
std::string escape_controls(const std::string& text) {
  std::string shown;
  shown.reserve(text.size());
  for (unsigned char c : text) {
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
      shown += fmt::format("\\x{:02x}", c);
    else
      shown += static_cast<char>(c);
  }
  return shown;
}
}  // namespace

std::string format_diagnostic(const std::string& file, int line, int column, const std::string& key_path,
                              const std::string& message) {
  return escape_controls(location_of(file, line, column, key_path) + ": " + message);
}

std::string ConfigWarning::text() const { return format_diagnostic(file, line, column, key_path, message); }

std::string format_location(const std::string& file, int line, int column, const std::string& key_path) {
  return escape_controls(location_of(file, line, column, key_path));
}

std::string duration_text(Time t) {
  int64_t ns = t.count();
  if (ns == 0) return "0";
  if (ns % 1000000000 == 0) return fmt::format("{}s", ns / 1000000000);
  if (ns % 1000000 == 0) return fmt::format("{}ms", ns / 1000000);
  if (ns % 1000 == 0) return fmt::format("{}us", ns / 1000);
  return fmt::format("{}ns", ns);
}

}  // namespace config

ConfigError::ConfigError(std::string file, int line, int column, std::string key_path, std::string message)
    : std::runtime_error(config::format_diagnostic(file, line, column, key_path, message)),
      file_(std::move(file)),
      key_path_(std::move(key_path)),
      message_(std::move(message)),
      line_(line),
      column_(column) {}

}  // namespace schedlab

// The one-line form shared by errors and warnings of every configuration
// reader: "file:line:col: key.path: message" (parts that are unknown are
// left out), so editors and humans can jump to the spot.
#pragma once

#include <string>

#include "sim/time.h"

namespace schedlab::config {

// A non-fatal finding of a configuration reader, kept in its parts so a
// later step can re-point it (a warning about a value an overlay wrote
// belongs to the overlay's line); text() is its one-line form.
struct ConfigWarning {
  std::string file;
  int line = 0, column = 0;  // 0: unknown (a node an overlay made has no line)
  std::string key_path;
  std::string message;
  std::string text() const;
};

std::string format_diagnostic(const std::string& file, int line, int column, const std::string& key_path,
                              const std::string& message);
// The same place without a message: "file:line:col: key.path".
std::string format_location(const std::string& file, int line, int column, const std::string& key_path);

// "950ms", "1s", "50us", "0": the shortest exact spelling, for messages and
// the documented defaults.
std::string duration_text(Time t);

}  // namespace schedlab::config

#include "sim/names.h"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>

namespace schedlab {

static std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string closest_name(std::string_view value, const std::vector<std::string>& names) {
  std::string want = lower(value);
  std::string best;
  size_t best_distance = std::max<size_t>(2, want.size() / 3) + 1;  // beyond this a guess is noise
  bool tie = false;  // two names as close: no guess ("6.10" is as near 6.1 as 6.12 and 6.18)
  for (const std::string& name : names) {
    size_t d = edit_distance(want, lower(name));
    if (d < best_distance) {
      best_distance = d;
      best = name;
      tie = false;
    } else if (d == best_distance && !best.empty() && lower(name) != lower(best)) {
      tie = true;
    }
  }
  return tie ? std::string() : best;
}

std::string did_you_mean(std::string_view value, const std::vector<std::string>& names) {
  std::string guess = closest_name(value, names);
  return guess.empty() ? std::string() : fmt::format("; did you mean '{}'?", guess);
}

}  // namespace schedlab

// "Did you mean" for error messages: the closest of a list of valid names
// by case-insensitive edit distance, or nothing when no name is close.
// Shared by the configuration layer and the experiment engine.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace schedlab {

size_t edit_distance(std::string_view a, std::string_view b);
// The name a user probably meant, or "" when nothing is close.
std::string closest_name(std::string_view value, const std::vector<std::string>& names);
// "; did you mean 'x'?" or "".
std::string did_you_mean(std::string_view value, const std::vector<std::string>& names);

}  // namespace schedlab

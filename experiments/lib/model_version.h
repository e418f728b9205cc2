// The model's source identity: a SHA-256 (hex) over sim/, models/ and
// experiments/lib/ by path and content, computed at build time
// (experiments/lib/source_hash.cmake). Two builds with the same value give
// the same numbers for the same inputs; a sweep's resume key includes it.
#pragma once

#include <string_view>

namespace schedlab {

std::string_view model_source_hash();

}  // namespace schedlab

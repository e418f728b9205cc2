#include "experiments/lib/model_version.h"

#include "schedlab_source_hash.h"

namespace schedlab {

std::string_view model_source_hash() { return SCHEDLAB_MODEL_SOURCE_HASH; }

}  // namespace schedlab

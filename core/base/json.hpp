#pragma once
// nm::Json, the one JSON value type: nlohmann::json. Each value type's header declares its to_json/from_json
// beside the type (found by nlohmann::json through ADL); the codecs are the json_codec_*.cpp files.
#include <nlohmann/json.hpp>

namespace nm {

using Json = nlohmann::json;

}  // namespace nm

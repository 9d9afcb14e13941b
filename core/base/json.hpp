#pragma once
// nm::Json, the one JSON value type: nlohmann::json. Each domain's codec header, beside its types
// (core/base/traffic_codec.hpp, core/host/host_codec.hpp, matrix/model/results_codec.hpp, ...), declares the
// to_json/from_json of its types, found by nlohmann::json through ADL; include the ones a file converts.
#include <nlohmann/json.hpp>

namespace nm {

using Json = nlohmann::json;

}  // namespace nm

#pragma once
// nm::Json, the one JSON value type: nlohmann::json. Each domain's codec header, beside its types
// (core/traffic/traffic_codec.hpp, core/host/host_codec.hpp, matrix/model/results_codec.hpp, ...), declares the
// to_json/from_json of its types, found by nlohmann::json through ADL; include the ones a file converts.
#include <nlohmann/json.hpp>

namespace nm {

using Json = nlohmann::json;

/// Declares the hand-written JSON codec of T in a codec header: its to_json/from_json pair, found by
/// nlohmann::json through ADL. (A plain record's codec is its field list's: core/base/field_json.hpp.)
// T is a type: it cannot be put in parentheses (bugprone-macro-parentheses).
// NOLINTBEGIN(bugprone-macro-parentheses)
#define NM_JSON_CODEC(T)               \
    void to_json(Json& j, const T& v); \
    void from_json(const Json& j, T& v)
// NOLINTEND(bugprone-macro-parentheses)

}  // namespace nm

#pragma once
// Reading a JSON document a user wrote (a sweep config, a profile category table): a syntax error becomes
// a usage error that names the file.
#include <string>

#include "core/base/json.hpp"

namespace nm {

/// Parses `text` as one JSON document. Throws nm::Error (Usage) "SOURCE: not valid JSON: WHAT" with
/// nlohmann's message from "parse error" on (it carries the line and column: "parse error at line 3,
/// column 5: ..."), or without its "[json.exception...] " prefix (a number too big for a double is an
/// out_of_range error, found by fuzz/sweep_config_fuzz.cpp).
Json parse_json_text(const std::string& text, const std::string& source);

}  // namespace nm

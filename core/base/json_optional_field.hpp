#pragma once
// Shared by the json_codec_*.cpp files only.
#include <nlohmann/json.hpp>

namespace nm::codec {

/// Reads `key` of `j` into `out` when it is present and not null; otherwise `out` keeps its default, so
/// files written by older versions (which lack newer keys) stay readable.
template <typename T>
void opt(const nlohmann::json& j, const char* key, T& out) {
    if (const auto it = j.find(key); it != j.end() && !it->is_null()) it->get_to(out);
}

}  // namespace nm::codec

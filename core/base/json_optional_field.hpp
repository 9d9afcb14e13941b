#pragma once
// Shared by the json_codec_*.cpp files only.
#include <type_traits>

#include <nlohmann/json.hpp>

#include "core/base/json_integer.hpp"

namespace nm::codec {

/// Reads `key` of `j` into `out` when it is present and not null; otherwise `out` keeps its default, so
/// files written by older versions (which lack newer keys) stay readable. Integers go through
/// checked_integer(): a value that does not fit `out` exactly is an error naming the key, never narrowed.
template <typename T>
void opt(const nlohmann::json& j, const char* key, T& out) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        out = checked_integer<T>(*it, key);
    } else {
        it->get_to(out);
    }
}

}  // namespace nm::codec

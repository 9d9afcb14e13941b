#pragma once
// Shared by the json_codec_*.cpp files only.
#include <limits>
#include <string>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "core/base/error.hpp"

namespace nm::codec {

/// `v` as the integer type T. nlohmann's get<T>() casts a fraction or an out-of-range number without a
/// check (undefined behaviour for a float too big for T, e.g. "bytes": 1e30 from a client); this refuses
/// anything that is not an integer T can hold with nm::Error (Usage) naming `key`.
template <typename T>
T integer(const nlohmann::json& v, const char* key) {
    static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>);
    const auto bad = [&] {
        return usage_error(std::string(key) + ": expected an integer from " + std::to_string(std::numeric_limits<T>::min()) + " to " +
                           std::to_string(std::numeric_limits<T>::max()) + ", got " + v.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace));
    };
    if (v.is_number_unsigned()) {
        const auto u = v.get<uint64_t>();
        if (u > static_cast<uint64_t>(std::numeric_limits<T>::max())) throw bad();
        return static_cast<T>(u);
    }
    if (v.is_number_integer()) {
        const auto i = v.get<int64_t>();
        if constexpr (std::is_unsigned_v<T>) {
            if (i < 0 || static_cast<uint64_t>(i) > static_cast<uint64_t>(std::numeric_limits<T>::max())) throw bad();
        } else {
            if (i < static_cast<int64_t>(std::numeric_limits<T>::min()) || i > static_cast<int64_t>(std::numeric_limits<T>::max())) throw bad();
        }
        return static_cast<T>(i);
    }
    throw bad();
}

/// Reads `key` of `j` into `out` when it is present and not null; otherwise `out` keeps its default, so
/// files written by older versions (which lack newer keys) stay readable. Integers are range-checked.
template <typename T>
void opt(const nlohmann::json& j, const char* key, T& out) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        out = integer<T>(*it, key);
    } else {
        it->get_to(out);
    }
}

}  // namespace nm::codec

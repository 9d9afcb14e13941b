#pragma once
// The one reader of integers from JSON that came from outside (the network, a file): a value is taken
// only when it is a JSON integer of the right sign that fits the target type exactly. nlohmann's get<T>()
// would narrow silently ("udp_port": 70000 becomes 4464, "v": 4294967297 becomes 1) and a float such as
// 1e20 converted to an integer is undefined behaviour, so neither is used on such input.
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "core/base/error.hpp"

namespace nm {

/// `value` as a T when it is a JSON integer in [0, max of T] (unsigned T) or [min, max] of T (signed T).
/// Floats (even 3.0), strings, negatives for unsigned T and values out of range throw nm::Error (Usage):
/// "<what>: expected an integer from 0 to 65535, got 70000".
template <typename T>
T checked_integer(const nlohmann::json& value, std::string_view what) {
    static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>);
    const auto fail = [&]() -> T {
        throw usage_error(std::string(what) + ": expected an integer from " + std::to_string(std::numeric_limits<T>::min()) + " to " +
                          std::to_string(std::numeric_limits<T>::max()) + ", got " + value.dump());
    };
    if (value.is_number_unsigned()) {
        const auto u = value.get<uint64_t>();
        if (u > static_cast<uint64_t>(std::numeric_limits<T>::max())) return fail();
        return static_cast<T>(u);
    }
    if (value.is_number_integer()) {  // parsed text stores only negatives as signed; a C++ int is signed
        const auto i = value.get<int64_t>();
        if constexpr (std::is_unsigned_v<T>) {
            if (i < 0 || static_cast<uint64_t>(i) > static_cast<uint64_t>(std::numeric_limits<T>::max())) return fail();
        } else {
            if (i < static_cast<int64_t>(std::numeric_limits<T>::min()) || i > static_cast<int64_t>(std::numeric_limits<T>::max())) return fail();
        }
        return static_cast<T>(i);
    }
    return fail();
}

/// The integer field `key` of `object` through checked_integer(); a missing key throws nm::Error (Usage)
/// naming it.
template <typename T>
T checked_integer_field(const nlohmann::json& object, const char* key) {
    if (!object.is_object() || !object.contains(key)) throw usage_error(std::string(key) + ": missing");
    return checked_integer<T>(object.at(key), key);
}

}  // namespace nm

#pragma once
// The codec's readers of what came from outside: the json_codec_*.cpp files, and the readers of the
// peer agent's replies (agent/peer_client.cpp).
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/json_integer.hpp"

namespace nm::codec {

template <typename T>
struct is_optional : std::false_type {};
template <typename T>
struct is_optional<std::optional<T>> : std::true_type {};
template <typename T>
struct is_vector : std::false_type {};
template <typename T, typename A>
struct is_vector<std::vector<T, A>> : std::true_type {};
template <typename T>
struct is_string_map : std::false_type {};
template <typename T, typename C, typename A>
struct is_string_map<std::map<std::string, T, C, A>> : std::true_type {};

/// `value` as a T, the one way the codec reads what came from outside. Integers, and the integers inside
/// an optional, a vector or a map by name, go through checked_integer(): a float, a negative for an
/// unsigned field or a value out of range is an nm::Error naming where it was ("channels.rx",
/// "placement[2]"), never narrowed and never converted out of range (undefined behaviour). Everything
/// else is nlohmann's get<T>() (its own types' from_json read their integers the same way).
template <typename T>
T read(const nlohmann::json& value, const std::string& what) {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        return checked_integer<T>(value, what);
    } else if constexpr (is_optional<T>::value) {
        if (value.is_null()) return std::nullopt;
        return read<typename T::value_type>(value, what);
    } else if constexpr (is_vector<T>::value) {
        if (!value.is_array()) throw usage_error(what + ": expected an array, got " + value.dump());
        T out;
        out.reserve(value.size());
        for (size_t i = 0; i < value.size(); ++i) out.push_back(read<typename T::value_type>(value[i], what + "[" + std::to_string(i) + "]"));
        return out;
    } else if constexpr (is_string_map<T>::value) {
        if (!value.is_object()) throw usage_error(what + ": expected an object, got " + value.dump());
        T out;
        for (const auto& [name, item] : value.items()) out.emplace(name, read<typename T::mapped_type>(item, what + "." + name));
        return out;
    } else {
        return value.get<T>();
    }
}

/// Reads `key` of `j` into `out` when it is present and not null; otherwise `out` keeps its default, so
/// files written by older versions (which lack newer keys) stay readable. Through read(): integers are
/// checked, never narrowed.
template <typename T>
void opt(const nlohmann::json& j, const char* key, T& out) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return;
    out = read<T>(*it, key);
}

/// Reads `key` of `j` into `out` through read(); a missing key is a JSON out_of_range error naming it, as
/// j.at(key) gives.
template <typename T>
void req(const nlohmann::json& j, const char* key, T& out) {
    out = read<T>(j.at(key), key);
}

}  // namespace nm::codec

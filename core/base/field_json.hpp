#pragma once
// The JSON codec derived from a struct's field list (core/base/field_list.hpp): write_fields and
// read_fields, and the to_json/from_json of every struct that declares `json_fields(const T*)` (found by
// nlohmann::json through ADL, as a hand-written pair would be). A codec header includes this beside its
// types; a struct with keys of its own (json_fields_and_more) keeps a hand-written pair that calls these.
//
// Writing: every field's key (an optional without value as null; FieldOption bits for omitted or null
// when empty or negative). Reading: codec::opt (missing or null keeps the default, integers checked, the
// key named in errors), codec::req for kFieldRequired, nothing for a value of another JSON type with
// kFieldIfTyped. Groups are written as an object and read only when one is there.
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "core/base/field_list.hpp"
#include "core/base/json.hpp"
#include "core/base/json_optional_field.hpp"

namespace nm {

namespace fields_detail {

template <typename M>
bool json_type_fits(const Json& value) {
    if constexpr (codec::is_optional<M>::value) {
        return json_type_fits<typename M::value_type>(value);
    } else if constexpr (std::is_same_v<M, bool>) {
        return value.is_boolean();
    } else if constexpr (std::is_arithmetic_v<M>) {
        return value.is_number();
    } else if constexpr (std::is_same_v<M, std::string> || std::is_enum_v<M>) {
        return value.is_string();
    } else if constexpr (codec::is_vector<M>::value) {
        return value.is_array();
    } else {
        return value.is_object();
    }
}

template <typename V, typename S, typename M>
void write_field(Json& j, const V& v, const Field<S, M>& f) {
    const M& m = v.*f.member;
    if constexpr (codec::is_optional<M>::value) {
        if (m) {
            j[f.key] = *m;
        } else if (!(f.options & kFieldOmitEmpty)) {
            j[f.key] = nullptr;
        }
    } else {
        if constexpr (requires { m.empty(); }) {
            if (m.empty() && (f.options & kFieldOmitEmpty)) return;
            if (m.empty() && (f.options & kFieldNullIfEmpty)) {
                j[f.key] = nullptr;
                return;
            }
        }
        if constexpr (std::is_arithmetic_v<M> && std::is_signed_v<M>) {
            if ((f.options & kFieldNullIfNegative) && m < 0) {
                j[f.key] = nullptr;
                return;
            }
        }
        j[f.key] = m;
    }
}

template <typename V, typename S, typename M>
void read_field(const Json& j, V& v, const Field<S, M>& f) {
    M& m = v.*f.member;
    if (f.options & kFieldRequired) {
        codec::req(j, f.key, m);
        return;
    }
    if (f.options & kFieldIfTyped) {
        const auto it = j.find(f.key);
        if (it == j.end() || !json_type_fits<M>(*it)) return;
    }
    codec::opt(j, f.key, m);
}

template <typename V, typename... Fs>
void write_field(Json& j, const V& v, const FieldGroup<Fs...>& g) {
    Json inner = Json::object();
    std::apply([&](const auto&... f) { (write_field(inner, v, f), ...); }, g.fields);
    j[g.key] = std::move(inner);
}

template <typename V, typename... Fs>
void read_field(const Json& j, V& v, const FieldGroup<Fs...>& g) {
    const auto it = j.find(g.key);
    if (it == j.end() || !it->is_object()) return;
    std::apply([&](const auto&... f) { (read_field(*it, v, f), ...); }, g.fields);
}

}  // namespace fields_detail

/// Writes the listed keys of `v` into the object `j` (which keeps what else it has).
template <typename V, typename List>
void write_fields(Json& j, const V& v, const List& list) {
    if (!j.is_object()) j = Json::object();
    std::apply([&](const auto&... f) { (fields_detail::write_field(j, v, f), ...); }, list);
}

/// Reads the listed keys of `j` into `v`, in the list's order.
template <typename V, typename List>
void read_fields(const Json& j, V& v, const List& list) {
    std::apply([&](const auto&... f) { (fields_detail::read_field(j, v, f), ...); }, list);
}

/// A struct whose whole JSON is its field list.
template <typename T>
concept JsonByFields = requires(const T* p) {
    json_fields(p);
};

template <JsonByFields T>
void to_json(Json& j, const T& v) {
    j = Json::object();
    write_fields(j, v, json_fields(&v));
}

template <JsonByFields T>
void from_json(const Json& j, T& v) {
    read_fields(j, v, json_fields(static_cast<const T*>(&v)));
}

}  // namespace nm

#pragma once
// A record's field list, declared once next to its struct: one field(key, member, options) per JSON key,
// in the order the codec reads them, and field_group(key, ...) for a nested object of members of the same
// struct ({"cpu": {"sender_pct": ..., "receiver_pct": ...}}). From it comes the struct's JSON codec
// (core/base/field_json.hpp): no JSON type is needed here, so a types header includes only this.
//
//   constexpr auto json_fields(const PerCpu*) {          // the JSON is exactly these keys
//       using S = PerCpu;
//       return field_list(field("cpu", &S::cpu), field("busy_pct", &S::busy_pct), ...);
//   }
//
// `json_fields(const T*)` (found by argument-dependent lookup) says the whole JSON of T is the list: its
// to_json/from_json are field_json.hpp's templates and nothing is written by hand. A struct whose JSON has
// more than one member per key (a computed key, a constant, a renamed old key) declares
// `json_fields_and_more(const T*)` instead, and its hand-written to_json/from_json (in its codec file)
// call write_fields/read_fields for the listed part and say what they add.
#include <tuple>

namespace nm {

/// How a field is written and read; the default is "always written, read when present and not null
/// (missing or null keeps the member's default)". An std::optional member is written as null when it
/// has no value, unless kFieldOmitEmpty.
enum FieldOption : unsigned {
    kFieldOmitEmpty = 1,       ///< written only when set: an optional with a value, a non-empty string or container
    kFieldNullIfEmpty = 2,     ///< an empty string or container is written as null
    kFieldNullIfNegative = 4,  ///< a number below 0 (the member's "unknown") is written as null
    kFieldRequired = 8,        ///< read with at(key): a missing key is an error naming it
    kFieldIfTyped = 16,        ///< read only when the value's JSON type fits the member; another type reads as absent
};

/// One JSON key of a struct S: its member and FieldOption bits.
template <typename S, typename M>
struct Field {
    const char* key;
    M S::*member;
    unsigned options;
};

template <typename S, typename M>
constexpr Field<S, M> field(const char* key, M S::*member, unsigned options = 0) {
    return Field<S, M>{key, member, options};
}

/// A nested object under `key` whose keys are fields of the same struct.
template <typename... Fs>
struct FieldGroup {
    const char* key;
    std::tuple<Fs...> fields;
};

template <typename... Fs>
constexpr FieldGroup<Fs...> field_group(const char* key, Fs... fields) {
    return FieldGroup<Fs...>{key, std::tuple<Fs...>{fields...}};
}

template <typename... Fs>
constexpr std::tuple<Fs...> field_list(Fs... fields) {
    return std::tuple<Fs...>{fields...};
}

}  // namespace nm

#pragma once
// The JSON Schema of a record, derived from its field list (core/base/field_list.hpp) at compile time:
// {"type": "object", "properties": {key: the member's schema}, "required": [keys with kFieldRequired]}.
// A member's schema follows its C++ type: bool -> "boolean"; an integer -> "integer" (unsigned, or
// kFieldNullIfNegative: "minimum": 0); floating -> "number"; std::string and an enum (written by name)
// -> "string"; std::optional (unless kFieldOmitEmpty), kFieldNullIfEmpty and kFieldNullIfNegative add
// "null"; std::vector -> "array" with its "items"; a map by name -> "object" with "additionalProperties"; a
// field_group -> a nested object; a record with a field list of its own -> {"$ref": "#/$defs/<name>"} when
// SchemaDefs names it, else its schema inline. Anything else (a type whose codec is written by hand,
// nm::Json) is {}: the committed schema describes it by hand. So does every extra key of a
// json_fields_and_more record, which SchemaDefs lists: it appears as {} beside the generated keys.
//
// `nicmatrix schema results` prints matrix/model/results_schema.cpp's defs; scripts/update_schemas.py splices
// them into results/results.schema.json (its hand-written descriptions stay).
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeindex>
#include <utility>
#include <vector>

#include "core/base/field_list.hpp"
#include "core/base/json.hpp"
#include "core/base/json_optional_field.hpp"

namespace nm {

/// A record whose JSON is (at least partly) a field list.
template <typename T>
concept HasFieldList = requires(const T* p) {
    json_fields(p);
}
|| requires(const T* p) { json_fields_and_more(p); };

template <HasFieldList T>
constexpr auto listed_fields() {
    if constexpr (requires(const T* p) { json_fields(p); }) {
        return json_fields(static_cast<const T*>(nullptr));
    } else {
        return json_fields_and_more(static_cast<const T*>(nullptr));
    }
}

/// The $defs a schema refers to, and the extra keys of the records whose codec writes keys of its own
/// (json_fields_and_more). Each def is generated from its record's field list.
class SchemaDefs {
public:
    /// T is $defs/<name>: every member of type T is written as a $ref to it. `extras`: T's keys the codec
    /// writes by hand (its json_fields_and_more comment says which).
    template <HasFieldList T>
    SchemaDefs& def(std::string name, std::vector<std::string> extras = {});

    /// The keys a json_fields_and_more record T adds by hand, for a T written inline (not a def).
    template <HasFieldList T>
    SchemaDefs& extras(std::vector<std::string> keys) {
        records_[typeid(T)].extras = std::move(keys);
        return *this;
    }

    /// {name: schema} of every def (nlohmann::json orders the names).
    Json defs() const {
        Json out = Json::object();
        for (const auto& [name, make] : makers_) out[name] = make(*this);
        return out;
    }

    /// The $defs name of T, or nullptr when T is written inline.
    template <typename T>
    const std::string* name_of() const {
        const auto it = records_.find(typeid(T));
        return it == records_.end() || it->second.name.empty() ? nullptr : &it->second.name;
    }

    /// The hand-written keys of T (empty for a record whose JSON is its list).
    template <typename T>
    std::vector<std::string> extras_of() const {
        const auto it = records_.find(typeid(T));
        return it == records_.end() ? std::vector<std::string>{} : it->second.extras;
    }

private:
    struct Record {
        std::string name;
        std::vector<std::string> extras;
    };
    std::map<std::type_index, Record> records_;
    std::vector<std::pair<std::string, std::function<Json(const SchemaDefs&)>>> makers_;
};

namespace schema_detail {

/// `s` that also takes null.
inline Json or_null(Json s) {
    if (s.empty()) return s;  // anything already
    if (s.contains("$ref") || s.contains("oneOf")) return Json{{"oneOf", Json::array({Json{{"type", "null"}}, std::move(s)})}};
    Json& type = s["type"];
    if (type.is_string()) type = Json::array({type, "null"});
    return s;
}

template <typename T>
Json record_schema(const SchemaDefs& defs);

template <typename M>
Json member_schema(const SchemaDefs& defs) {
    if constexpr (codec::is_optional<M>::value) {
        return or_null(member_schema<typename M::value_type>(defs));
    } else if constexpr (std::is_same_v<M, bool>) {
        return Json{{"type", "boolean"}};
    } else if constexpr (std::is_integral_v<M>) {
        Json s{{"type", "integer"}};
        if constexpr (std::is_unsigned_v<M>) s["minimum"] = 0;
        return s;
    } else if constexpr (std::is_floating_point_v<M>) {
        return Json{{"type", "number"}};
    } else if constexpr (std::is_same_v<M, std::string> || std::is_enum_v<M>) {
        return Json{{"type", "string"}};
    } else if constexpr (codec::is_vector<M>::value) {
        Json s{{"type", "array"}};
        Json items = member_schema<typename M::value_type>(defs);
        if (!items.empty()) s["items"] = std::move(items);
        return s;
    } else if constexpr (codec::is_string_map<M>::value) {
        Json s{{"type", "object"}};
        Json values = member_schema<typename M::mapped_type>(defs);
        if (!values.empty()) s["additionalProperties"] = std::move(values);
        return s;
    } else if constexpr (HasFieldList<M>) {
        if (const std::string* name = defs.name_of<M>()) return Json{{"$ref", "#/$defs/" + *name}};
        return record_schema<M>(defs);
    } else {
        return Json::object();  // written by a codec of its own: described by hand
    }
}

// An optional written only when set (kFieldOmitEmpty) is never null.
template <typename M>
Json field_member_schema(unsigned options, const SchemaDefs& defs) {
    if constexpr (codec::is_optional<M>::value) {
        if (options & kFieldOmitEmpty) return member_schema<typename M::value_type>(defs);
    }
    return member_schema<M>(defs);
}

template <typename S, typename M>
void add_field(Json& properties, Json& required, const Field<S, M>& f, const SchemaDefs& defs) {
    Json s = field_member_schema<M>(f.options, defs);
    bool nullable = (f.options & kFieldNullIfEmpty) != 0;
    if constexpr (std::is_integral_v<M> && std::is_signed_v<M>) {
        if (f.options & kFieldNullIfNegative) {
            nullable = true;
            s["minimum"] = 0;
        }
    }
    properties[f.key] = nullable ? or_null(std::move(s)) : std::move(s);
    if (f.options & kFieldRequired) required.push_back(f.key);
}

inline Json object_schema(Json properties, Json required) {
    Json s{{"type", "object"}, {"properties", std::move(properties)}};
    if (!required.empty()) s["required"] = std::move(required);
    return s;
}

template <typename... Fs>
void add_field(Json& properties, Json&, const FieldGroup<Fs...>& g, const SchemaDefs& defs) {
    Json inner = Json::object();
    Json required = Json::array();
    std::apply([&](const auto&... f) { (add_field(inner, required, f, defs), ...); }, g.fields);
    properties[g.key] = object_schema(std::move(inner), std::move(required));
}

template <typename T>
Json record_schema(const SchemaDefs& defs) {
    Json properties = Json::object();
    Json required = Json::array();
    std::apply([&](const auto&... f) { (add_field(properties, required, f, defs), ...); }, listed_fields<T>());
    for (const auto& key : defs.extras_of<T>()) properties[key] = Json::object();
    return object_schema(std::move(properties), std::move(required));
}

}  // namespace schema_detail

/// The schema of record T from its field list; members of a type `defs` names are $refs to it.
template <HasFieldList T>
Json field_list_schema(const SchemaDefs& defs = SchemaDefs{}) {
    return schema_detail::record_schema<T>(defs);
}

template <HasFieldList T>
SchemaDefs& SchemaDefs::def(std::string name, std::vector<std::string> extras) {
    records_[typeid(T)] = Record{name, std::move(extras)};
    makers_.emplace_back(std::move(name), [](const SchemaDefs& defs) { return field_list_schema<T>(defs); });
    return *this;
}

}  // namespace nm

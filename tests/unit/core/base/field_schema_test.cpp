#include <catch2/catch.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/base/field_schema.hpp"

namespace nm {

enum class SchemaTestColour { Red, Blue };

// A nested record with a field list of its own.
struct SchemaTestInner {
    uint32_t id = 0;
    double share = 0;
};

constexpr auto json_fields(const SchemaTestInner*) {
    using S = SchemaTestInner;
    return field_list(field("id", &S::id, kFieldRequired), field("share", &S::share));
}

// A record of every kind of member the generator knows.
struct SchemaTestRecord {
    std::string name;
    uint64_t bytes = 0;
    int tos = -1;
    bool on = false;
    std::string note;
    SchemaTestColour colour = SchemaTestColour::Red;
    std::optional<double> ratio;
    std::vector<uint32_t> cpus;
    std::map<std::string, int> counts;
    SchemaTestInner inner;
    std::vector<SchemaTestInner> inners;
    std::optional<SchemaTestInner> maybe;
    std::optional<uint32_t> when_set;
    double sender = 0;
    Json raw;
};

constexpr auto json_fields_and_more(const SchemaTestRecord*) {
    using S = SchemaTestRecord;
    return field_list(field("name", &S::name, kFieldRequired), field("bytes", &S::bytes), field("tos", &S::tos, kFieldNullIfNegative),
                      field("on", &S::on), field("note", &S::note, kFieldNullIfEmpty | kFieldOmitEmpty), field("colour", &S::colour),
                      field("ratio", &S::ratio), field("cpus", &S::cpus), field("counts", &S::counts), field("inner", &S::inner),
                      field("inners", &S::inners), field("maybe", &S::maybe), field("when_set", &S::when_set, kFieldOmitEmpty),
                      field_group("cpu", field("sender", &S::sender, kFieldRequired)), field("raw", &S::raw));
}

}  // namespace nm

TEST_CASE("a record's schema follows its members' types and the field options", "[unit]") {
    const auto s = nm::field_list_schema<nm::SchemaTestRecord>();
    CHECK(s["type"] == "object");
    CHECK(s["required"] == nm::Json::array({"name"}));
    const auto& p = s["properties"];
    CHECK(p["name"] == nm::Json{{"type", "string"}});
    CHECK(p["bytes"] == nm::Json{{"type", "integer"}, {"minimum", 0}});
    CHECK(p["tos"] == nm::Json{{"type", {"integer", "null"}}, {"minimum", 0}});
    CHECK(p["on"] == nm::Json{{"type", "boolean"}});
    CHECK(p["note"] == nm::Json{{"type", {"string", "null"}}});
    CHECK(p["colour"] == nm::Json{{"type", "string"}});
    CHECK(p["ratio"] == nm::Json{{"type", {"number", "null"}}});
    CHECK(p["when_set"] == nm::Json{{"type", "integer"}, {"minimum", 0}});  // never written as null
    CHECK(p["cpus"] == nm::Json{{"type", "array"}, {"items", {{"type", "integer"}, {"minimum", 0}}}});
    CHECK(p["counts"] == nm::Json{{"type", "object"}, {"additionalProperties", {{"type", "integer"}}}});
    CHECK(p["cpu"] == nm::Json{{"type", "object"}, {"properties", {{"sender", {{"type", "number"}}}}}, {"required", {"sender"}}});
    CHECK(p["raw"] == nm::Json::object());
    // Not named as a def: the nested record inline, with its own required keys.
    const nm::Json inner{
        {"type", "object"}, {"properties", {{"id", {{"type", "integer"}, {"minimum", 0}}}, {"share", {{"type", "number"}}}}}, {"required", {"id"}}};
    CHECK(p["inner"] == inner);
    CHECK(p["inners"] == nm::Json{{"type", "array"}, {"items", inner}});
    CHECK(p["maybe"] == nm::Json{{"type", {"object", "null"}}, {"properties", inner["properties"]}, {"required", {"id"}}});
}

TEST_CASE("a record named as a def is a $ref, and a record's hand-written keys are left open", "[unit]") {
    nm::SchemaDefs defs;
    defs.def<nm::SchemaTestRecord>("record", {"kind"}).def<nm::SchemaTestInner>("inner");
    const auto out = defs.defs();
    REQUIRE(out.size() == 2);
    CHECK(out.begin().key() == "inner");  // nlohmann orders keys; update_schemas.py keeps the file's order
    const auto& p = out["record"]["properties"];
    CHECK(p["inner"] == nm::Json{{"$ref", "#/$defs/inner"}});
    CHECK(p["inners"] == nm::Json{{"type", "array"}, {"items", {{"$ref", "#/$defs/inner"}}}});
    CHECK(p["maybe"] == nm::Json{{"oneOf", {{{"type", "null"}}, {{"$ref", "#/$defs/inner"}}}}});
    CHECK(p["kind"] == nm::Json::object());
    CHECK(out["inner"] == nm::field_list_schema<nm::SchemaTestInner>());
}

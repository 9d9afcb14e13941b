// The test spec's field table (core/traffic/test_spec_fields.hpp) and what is derived from it: every field
// is written and read back under its key, a traffic entry takes the table's axes and checks their ranges,
// and the generated schema fragments name them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <type_traits>

#include "core/base/error.hpp"
#include "core/traffic/test_spec_fields.hpp"
#include "core/traffic/test_spec_schema.hpp"
#include "core/traffic/traffic_codec.hpp"
#include "matrix/model/sweep_codec.hpp"

namespace {

// A value of the member's type other than its default (enums: left as they are).
template <typename T>
void set_other(T& v) {
    if constexpr (std::is_same_v<T, bool>) v = !v;
    else if constexpr (std::is_arithmetic_v<T>) v = static_cast<T>(v + 7);
    else if constexpr (std::is_same_v<T, std::string>) v = "x" + v;
}

nm::Json sweep_with(const nm::Json& entry) {
    nm::Json j = nm::Json::parse(R"({"offloads": [{"name": "a", "features": {"tso": "off"}}], "mtu": [1500]})");
    j["traffic"] = nm::Json::array({entry});
    return j;
}

}  // namespace

TEST_CASE("every field of the table is written and read back under its key") {
    std::set<std::string> keys;
    for (const auto& f : nm::kTestSpecFields) CHECK(keys.insert(f.key).second);  // declared once
    nm::TestSpec spec;
    for_each_test_spec_field(spec, [](const nm::TestSpecField&, auto& member) { set_other(member); });
    const nm::Json j = spec;
    for (const auto& f : nm::kTestSpecFields) CHECK(j.contains(f.key));
    const auto back = j.get<nm::TestSpec>();
    for_each_test_spec_field(spec, back, [](const nm::TestSpecField& f, const auto& a, const auto& b) {
        INFO(f.key);
        CHECK(a == b);
    });
}

TEST_CASE("a traffic entry takes the table's axes and checks their ranges, naming the field") {
    for (const auto& f : nm::kTestSpecFields) {
        const std::string key = f.key;
        // Checked by hand: their range depends on the protocol.
        if (f.axis == nm::FieldAxis::None || f.max <= 0 || key == "write_size" || key == "request_size" || key == "response_size") continue;
        INFO(f.key);
        nm::Json entry = {{f.key, f.max * 2}};
        if (f.axis == nm::FieldAxis::Rr) entry["test"] = "rr";
        try {
            (void)nm::parse_sweep_config(sweep_with(entry));
            FAIL("accepted");
        } catch (const nm::Error& e) {
            CHECK_THAT(e.what(), Catch::Contains("/traffic/0/" + std::string(f.key)) && Catch::Contains(f.help));
        }
    }
}

TEST_CASE("the generated schemas name every field of the table") {
    const auto spec = nm::test_spec_schema();
    const auto traffic = nm::traffic_entry_schema();
    for (const auto& f : nm::kTestSpecFields) {
        INFO(f.key);
        CHECK(spec["properties"].contains(f.key));
        const bool in_entries = traffic["stream"].dump().find('"' + std::string(f.key) + '"') != std::string::npos ||
                                traffic["rr"].dump().find('"' + std::string(f.key) + '"') != std::string::npos;
        CHECK(in_entries == (f.axis != nm::FieldAxis::None));
    }
    CHECK(traffic["test_fields"]["streams"] == nm::Json{{"type", "integer"}, {"minimum", 1}, {"maximum", 256}, {"default", 1}});
}

TEST_CASE("the table's flags of nicmatrix run are unique, and a flag they need comes before them") {
    std::set<std::string> names;
    std::set<std::string> flagged;  // keys whose flag is already made
    for (const auto& f : nm::kTestSpecFields) {
        INFO(f.key);
        const std::string all = f.flag.names;
        if (all.empty()) continue;
        for (size_t at = 0; at <= all.size();) {
            const size_t comma = std::min(all.find(',', at), all.size());
            const std::string name = all.substr(at, comma - at);
            CHECK(name.rfind('-', 0) == 0);
            CHECK(names.insert(name).second);
            at = comma + 1;
        }
        if (*f.flag.needs != '\0') CHECK(flagged.count(f.flag.needs) == 1);
        if (f.flag.options & nm::kFlagPositive) CHECK((f.flag.options & nm::kFlagScaled) != 0);
        CHECK(!std::string(f.flag.help).empty());
        flagged.insert(f.key);
    }
    CHECK(names.count("--parallel") == 1);
}

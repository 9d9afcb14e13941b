// The sweep config's field tables (matrix/model/sweep_config_fields.hpp) against the real parser: every key
// that is one member takes its range's edges and refuses what lies past them, with the pointer first and
// the table's wording; every key outside the table's list is refused, naming the list.
#include <catch2/catch.hpp>

#include <iterator>
#include <string>
#include <type_traits>

#include "core/base/error.hpp"
#include "matrix/config.hpp"
#include "matrix/model/sweep_codec.hpp"
#include "matrix/model/sweep_config_fields.hpp"
#include "matrix/model/sweep_config_schema.hpp"

namespace {

using nm::Json;
using nm::SweepConfigField;

const Json kMinimal = Json::parse(R"({"offloads": [{"name": "a", "features": {"tso": "off"}}], "mtu": [1500], "traffic": [{}]})");

// The message of the usage error parsing `config` throws; "" when it parses. Through its text, as a file
// is read (a JSON parser gives a positive integer as unsigned; Json(1) in C++ is signed).
std::string error_of(const Json& config) {
    try {
        nm::parse_sweep_config(Json::parse(config.dump()));
    } catch (const nm::Error& e) {
        CHECK(e.kind() == nm::ErrorKind::Usage);
        return e.what();
    }
    return "";
}

// Where a record's keys go in a config: the top level, or its object (with what that object requires).
struct RecordPlace {
    std::string object;  ///< "" = the top level
    Json base;           ///< the object's required keys
};

Json config_with(const RecordPlace& place, const std::string& key, const Json& value) {
    Json config = kMinimal;
    if (place.object.empty()) {
        config[key] = value;
    } else {
        config[place.object] = place.base;
        config[place.object][key] = value;
    }
    return config;
}

std::string pointer_of(const RecordPlace& place, const std::string& key) { return place.object.empty() ? "/" + key : "/" + place.object + "/" + key; }

// Every row of `Record`'s table: its edges pass, just past them fails with "<pointer>: expected <expected>,
// got <value>"; a switch takes true and false and refuses a number.
template <typename Record>
void check_ranges(const RecordPlace& place) {
    const Record defaults{};
    size_t rows = 0;
    nm::for_each_sweep_field(defaults, [&](const SweepConfigField& f, const auto& member) {
        using T = std::decay_t<decltype(member)>;
        INFO(f.key);
        ++rows;
        const std::string expected = pointer_of(place, f.key) + ": expected " + f.expected + ", got ";
        if constexpr (std::is_same_v<T, bool>) {
            CHECK(error_of(config_with(place, f.key, true)).empty());
            CHECK(error_of(config_with(place, f.key, false)).empty());
            CHECK(error_of(config_with(place, f.key, 1)) == expected + "1");
        } else {
            const bool above_min = (f.options & nm::kSweepKeyAboveMin) != 0;
            const double step = std::is_integral_v<T> ? 1 : 0.5;
            const Json min = std::is_integral_v<T> ? Json(static_cast<uint64_t>(f.min)) : Json(f.min);
            const Json max = std::is_integral_v<T> ? Json(static_cast<uint64_t>(f.max)) : Json(f.max);
            CHECK(error_of(config_with(place, f.key, max)).empty());
            if (above_min) {
                CHECK(error_of(config_with(place, f.key, min)) == expected + min.dump());
                CHECK(error_of(config_with(place, f.key, f.min + step)).empty());
            } else {
                CHECK(error_of(config_with(place, f.key, min)).empty());
                const Json below = std::is_integral_v<T> ? Json(static_cast<int64_t>(f.min) - 1) : Json(f.min - step);
                CHECK(error_of(config_with(place, f.key, below)) == expected + below.dump());
            }
            const Json above = std::is_integral_v<T> ? Json(static_cast<uint64_t>(f.max) + 1) : Json(f.max + step);
            CHECK(error_of(config_with(place, f.key, above)) == expected + above.dump());
            CHECK(error_of(config_with(place, f.key, "1")) == expected + "\"1\"");
        }
        if (f.options & nm::kSweepKeyRequired) {
            Json config = config_with(place, f.key, 0);
            (place.object.empty() ? config : config[place.object]).erase(f.key);
            CHECK(error_of(config) == pointer_of(place, f.key) + ": missing; expected " + f.help);
        }
    });
    CHECK(rows == std::size(nm::SweepFieldTable<Record>::kRows));

    // A key the table does not list is refused, naming every key it does.
    const auto keys = nm::sweep_record_keys<Record>();
    std::string listed;
    for (const auto& k : keys) listed += (listed.empty() ? "\"" : ", \"") + k + "\"";
    CHECK(error_of(config_with(place, "colour", 1)) == pointer_of(place, "colour") + ": unknown key; expected one of " + listed);
}

}  // namespace

TEST_CASE("Each key of the sweep config's tables is range-checked at its edges by the parser", "[unit]") {
    SECTION("the top level") { check_ranges<nm::SweepConfig>({"", Json::object()}); }
    // min_repetitions <= max_repetitions is checked too: the other one at its widest lets each reach its edges.
    SECTION("precision") { check_ranges<nm::PrecisionSpec>({"precision", Json{{"ci_pct", 5}, {"min_repetitions", 1}, {"max_repetitions", 1000}}}); }
    SECTION("interference") { check_ranges<nm::InterferenceSpec>({"interference", Json::object()}); }
}

TEST_CASE("A value at a table key's edge reaches its member, and the writer writes it back", "[unit]") {
    Json config = kMinimal;
    config["duration_s"] = 86400;
    config["repetitions"] = 1;
    config["profile"] = true;
    config["profile_hz"] = 10000;
    config["precision"] = Json{{"ci_pct", 100}, {"confidence", 50}, {"min_repetitions", 1}, {"max_repetitions", 1000}};
    config["interference"] = Json{{"sample_ms", 0}, {"max_wait_s", 3600}};
    const auto c = nm::parse_sweep_config(Json::parse(config.dump()));
    CHECK(c.duration_s == 86400);
    CHECK(c.repetitions == 1);
    CHECK(c.profile_hz == 10000);
    REQUIRE(c.precision);
    CHECK(c.precision->confidence == 50);
    CHECK(c.precision->max_repetitions == 1000);
    CHECK(c.interference.sample_ms == 0);
    CHECK(c.interference.max_wait_s == 3600);
    const Json written(c);
    CHECK(written["profile_hz"] == 10000);
    CHECK(written["precision"]["min_repetitions"] == 1);
    CHECK(written["interference"]["max_busy_pct"] == 20);
    CHECK(Json(nm::parse_sweep_config(written)) == written);
}

TEST_CASE("The generated schema of the sweep config says what the tables say", "[unit]") {
    const auto schema = nm::sweep_config_schema();
    const auto& precision = schema.at("precision");
    CHECK(precision.at("required") == Json::array({"ci_pct"}));
    CHECK(precision.at("properties").at("ci_pct") ==
          Json{{"type", "number"},
               {"exclusiveMinimum", 0},
               {"maximum", 100},
               {"description", "the wanted half-width of the median's interval, in percent of the median"}});
    CHECK(precision.at("properties").at("confidence").at("maximum") == 99.9);
    CHECK(precision.at("keys").back() == "metric");
    const auto& config = schema.at("config").at("properties");
    CHECK(config.at("repetitions") == Json{{"type", "integer"},
                                           {"minimum", 1},
                                           {"maximum", 1000},
                                           {"default", 3},
                                           {"description", nm::SweepFieldTable<nm::SweepConfig>::kRows[2].help}});
    CHECK(config.at("profile").at("default") == false);
    CHECK_FALSE(config.contains("order"));  // an enum, written by hand
    CHECK(schema.at("config").at("keys").back() == "qdisc");
}

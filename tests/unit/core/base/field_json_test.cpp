#include <catch2/catch.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/base/error.hpp"
#include "core/base/field_json.hpp"

namespace nm {

// A record of every kind of field the machinery knows (in nm, where nlohmann's ADL finds the codec).
struct FieldsTestRecord {
    std::string name;
    uint32_t count = 0;
    int tos = -1;
    std::string note;
    std::vector<uint32_t> cpus;
    std::optional<double> ratio;
    std::optional<uint64_t> seen;
    std::map<std::string, std::string> extra;
    double sender = 0;
    double receiver = 0;
};

constexpr auto json_fields(const FieldsTestRecord*) {
    using S = FieldsTestRecord;
    return field_list(field("name", &S::name, kFieldRequired), field("count", &S::count), field("tos", &S::tos, kFieldNullIfNegative),
                      field("note", &S::note, kFieldNullIfEmpty), field("cpus", &S::cpus, kFieldOmitEmpty), field("ratio", &S::ratio),
                      field("seen", &S::seen, kFieldOmitEmpty), field("extra", &S::extra, kFieldIfTyped),
                      field_group("cpu", field("sender", &S::sender), field("receiver", &S::receiver)));
}

}  // namespace nm

TEST_CASE("a field list writes every key as its options say") {
    nm::FieldsTestRecord r;
    r.name = "a";
    CHECK(nm::Json(r).dump() == R"({"count":0,"cpu":{"receiver":0.0,"sender":0.0},"extra":{},"name":"a","note":null,"ratio":null,"tos":null})");
    r.tos = 184;
    r.note = "n";
    r.cpus = {1, 2};
    r.ratio = 1.5;
    r.seen = 7;
    r.sender = 2;
    CHECK(nm::Json(r).dump() ==
          R"({"count":0,"cpu":{"receiver":0.0,"sender":2.0},"cpus":[1,2],"extra":{},"name":"a","note":"n","ratio":1.5,"seen":7,"tos":184})");
}

TEST_CASE("a field list reads back what it wrote") {
    nm::FieldsTestRecord r;
    r.name = "a";
    r.count = 3;
    r.cpus = {4};
    r.seen = 9;
    r.extra = {{"k", "v"}};
    r.receiver = 1.25;
    const auto back = nm::Json(r).get<nm::FieldsTestRecord>();
    CHECK(back.name == "a");
    CHECK(back.count == 3);
    CHECK(back.tos == -1);
    CHECK(back.cpus == std::vector<uint32_t>{4});
    CHECK(!back.ratio);
    CHECK(back.seen == std::optional<uint64_t>(9));
    CHECK(back.extra.at("k") == "v");
    CHECK(back.receiver == 1.25);
}

TEST_CASE("a field list reads tolerantly, but a required key, a bad integer and a bad value name their field") {
    // Missing and null keep the defaults; a value of another type where kFieldIfTyped reads as absent;
    // a group that is not an object is passed over.
    const auto r = nm::Json::parse(R"({"name":"a","count":null,"extra":5,"cpu":3})").get<nm::FieldsTestRecord>();
    CHECK(r.count == 0);
    CHECK(r.extra.empty());
    CHECK(r.sender == 0);
    CHECK_THROWS_WITH(nm::Json::parse(R"({"count":1})").get<nm::FieldsTestRecord>(), Catch::Contains("key 'name' not found"));
    CHECK_THROWS_WITH(nm::Json::parse(R"({"name":"a","count":-1})").get<nm::FieldsTestRecord>(),
                      "count: expected an integer from 0 to 4294967295, got -1");
    CHECK_THROWS_WITH(nm::Json::parse(R"({"name":"a","cpu":{"sender":"x"}})").get<nm::FieldsTestRecord>(), Catch::Contains("string"));
    CHECK_THROWS_WITH(nm::Json::parse(R"({"name":"a","cpus":[1,-2]})").get<nm::FieldsTestRecord>(), Catch::StartsWith("cpus[1]: "));
}

TEST_CASE("write_fields adds the listed keys to an object a hand-written codec builds") {
    nm::FieldsTestRecord r;
    r.name = "b";
    nm::Json j{{"kind", "hand"}};
    nm::write_fields(j, r, nm::field_list(nm::field("name", &nm::FieldsTestRecord::name)));
    CHECK(j.dump() == R"({"kind":"hand","name":"b"})");
    nm::FieldsTestRecord back;
    nm::read_fields(j, back, nm::field_list(nm::field("name", &nm::FieldsTestRecord::name)));
    CHECK(back.name == "b");
}

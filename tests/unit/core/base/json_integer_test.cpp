// The checked reader of integers from outside: exact, in range, no floats, no silent narrowing (review L4).
#include <catch2/catch.hpp>

#include "core/base/error.hpp"
#include "core/base/json_integer.hpp"
#include "core/traffic/traffic_codec.hpp"

using Catch::Contains;
using nm::Json;

TEST_CASE("checked_integer takes integers that fit and refuses everything nlohmann would narrow", "[unit]") {
    CHECK(nm::checked_integer<uint16_t>(Json(65535), "udp_port") == 65535);
    CHECK(nm::checked_integer<uint32_t>(Json(0), "streams") == 0);
    CHECK(nm::checked_integer<uint64_t>(Json::parse("18446744073709551615"), "bytes") == UINT64_MAX);
    CHECK(nm::checked_integer<int64_t>(Json(-5), "offset") == -5);
    // What get<T>() turns into something else:
    CHECK_THROWS_WITH(nm::checked_integer<uint16_t>(Json(70000), "udp_port"), Contains("udp_port: expected an integer from 0 to 65535, got 70000"));
    CHECK_THROWS_WITH(nm::checked_integer<uint32_t>(Json::parse("4294967297"), "streams"), Contains("got 4294967297"));
    CHECK_THROWS_WITH(nm::checked_integer<uint32_t>(Json(-1), "streams"), Contains("got -1"));
    CHECK_THROWS_WITH(nm::checked_integer<uint32_t>(Json(3.0), "streams"), Contains("got 3.0"));
    CHECK_THROWS_WITH(nm::checked_integer<uint64_t>(Json(1e20), "bytes"), Contains("bytes"));
    CHECK_THROWS(nm::checked_integer<uint32_t>(Json("7"), "streams"));
    CHECK_THROWS(nm::checked_integer<uint32_t>(Json(true), "streams"));
    CHECK_THROWS(nm::checked_integer<int8_t>(Json(-129), "x"));
    try {
        (void)nm::checked_integer<uint16_t>(Json(70000), "udp_port");
    } catch (const nm::Error& e) {
        CHECK(e.kind() == nm::ErrorKind::Usage);
    }
    CHECK_THROWS_WITH(nm::checked_integer_field<uint32_t>(Json::object(), "cookie"), Contains("cookie: missing"));
}

TEST_CASE("A test spec from the network is read with the checked reader", "[unit]") {
    const auto spec = [](const std::string& field, const std::string& value) {
        return Json::parse(R"({"protocol":"udp",")" + field + "\":" + value + "}").get<nm::TestSpec>();
    };
    CHECK(spec("streams", "4").streams == 4);
    CHECK_THROWS_WITH(spec("streams", "4294967297"), Contains("streams"));  // was read as 1
    CHECK_THROWS_WITH(spec("window", "4294969344"), Contains("window"));    // was read as 2048
    CHECK_THROWS_WITH(spec("port", "70000"), Contains("port"));
    CHECK_THROWS_WITH(spec("write_size", "1e20"), Contains("write_size"));  // undefined behaviour before
    CHECK_THROWS_WITH(spec("payload_mix", R"([{"payload_bytes": 64, "weight": -1}])"), Contains("weight"));
}

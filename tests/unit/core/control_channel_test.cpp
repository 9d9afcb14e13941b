#include <catch2/catch.hpp>

#include <sys/socket.h>

#include <thread>

#include "core/base/error.hpp"
#include "core/control_channel.hpp"

using Catch::Contains;

TEST_CASE("decode_control_message accepts a versioned typed object", "[unit]") {
    const auto j = nm::decode_control_message(R"({"v":1,"type":"hello","spec":{}})");
    CHECK(j.at("type") == "hello");
    const auto line = nm::encode_control_message(nm::Json{{"type", "ready"}});
    CHECK(line.back() == '\n');
    CHECK(nm::decode_control_message(line.substr(0, line.size() - 1)).at("v") == 1);
}

TEST_CASE("decode_control_message rejects bad version, missing type, non-objects, oversize", "[unit]") {
    CHECK_THROWS_WITH(nm::decode_control_message(R"({"v":2,"type":"hello"})"), Contains("version 2"));
    CHECK_THROWS_WITH(nm::decode_control_message(R"({"type":"hello"})"), Contains("version missing"));
    CHECK_THROWS_WITH(nm::decode_control_message(R"({"v":1})"), Contains("no \"type\""));
    CHECK_THROWS_WITH(nm::decode_control_message(R"([1,2])"), Contains("not a JSON object"));
    CHECK_THROWS_WITH(nm::decode_control_message("{\"v\":1,"), Contains("not a JSON object"));
    const std::string big = R"({"v":1,"type":"x","pad":")" + std::string(nm::kMaxControlMessage, 'a') + "\"}";
    CHECK_THROWS_WITH(nm::decode_control_message(big), Contains("longer than"));
}

namespace {

struct Pair {
    nm::UniqueFd a, b;
    Pair() {
        int fds[2];
        REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
        a.reset(fds[0]);
        b.reset(fds[1]);
    }
};

nm::Deadline soon(int ms) { return std::chrono::steady_clock::now() + std::chrono::milliseconds(ms); }

}  // namespace

TEST_CASE("ControlChannel carries messages, splits lines, and times out", "[unit]") {
    Pair p;
    nm::ControlChannel tx(std::move(p.a));
    nm::ControlChannel rx(std::move(p.b));
    tx.send(nm::Msg::Hello, nm::Json{{"n", 1}}, soon(1000));
    tx.send(nm::Msg::Start, nm::Json::object(), soon(1000));
    auto m1 = rx.receive(soon(1000));
    auto m2 = rx.receive(soon(1000));
    REQUIRE(m1);
    REQUIRE(m2);
    CHECK(m1->at("type") == "hello");
    CHECK(m1->at("n") == 1);
    CHECK(m2->at("type") == "start");
    const auto t0 = std::chrono::steady_clock::now();
    CHECK_FALSE(rx.receive(soon(50)));
    CHECK(std::chrono::steady_clock::now() - t0 >= std::chrono::milliseconds(45));
    CHECK_THROWS_WITH(rx.expect(soon(20), "the start message"), Contains("timed out waiting for the start message"));
}

TEST_CASE("ControlChannel refuses a line over the size cap and reports a closed peer", "[unit]") {
    Pair p;
    nm::ControlChannel rx(std::move(p.b));
    std::thread writer([fd = std::move(p.a)]() mutable {
        const std::string junk(nm::kMaxControlMessage + 10, 'x');   // no newline at all
        nm::send_all(fd.get(), junk.data(), junk.size(), soon(2000), "junk");
    });
    CHECK_THROWS_WITH(rx.receive(soon(2000)), Contains("longer than"));
    writer.join();

    Pair q;
    nm::ControlChannel rx2(std::move(q.b));
    q.a.reset();
    try {
        rx2.receive(soon(1000));
        FAIL("no error for a closed peer");
    } catch (const nm::Error& e) {
        CHECK(e.kind() == nm::ErrorKind::Closed);
        CHECK_THAT(e.what(), Contains("closed by peer"));
    }
    // Sending to a closed peer is the same kind (EPIPE), so callers never match text.
    try {
        rx2.send(nm::Msg::Heartbeat, nm::Json::object(), soon(1000));
        rx2.send(nm::Msg::Heartbeat, nm::Json::object(), soon(1000));
        FAIL("no error sending to a closed peer");
    } catch (const nm::Error& e) {
        CHECK(e.kind() == nm::ErrorKind::Closed);
    }
}

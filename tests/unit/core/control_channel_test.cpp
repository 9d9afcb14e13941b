#include <catch2/catch.hpp>

#include <sys/socket.h>

#include <thread>

#include "core/base/error.hpp"
#include "core/control/control_channel.hpp"

using Catch::Contains;

TEST_CASE("decode_control_message accepts a versioned typed object", "[unit]") {
    const auto j = nm::decode_control_message(R"({"v":2,"type":"hello","spec":{}})");
    CHECK(j.at("type") == "hello");
    const auto line = nm::encode_control_message(nm::Json{{"type", "ready"}});
    CHECK(line.back() == '\n');
    CHECK(nm::decode_control_message(line.substr(0, line.size() - 1)).at("v") == nm::kControlVersion);
}

TEST_CASE("decode_control_message rejects bad version, missing type, non-objects, oversize", "[unit]") {
    // Version 1 signed a re-serialized copy of each message; version 2 signs the bytes sent.
    CHECK_THROWS_WITH(nm::decode_control_message(R"({"v":1,"type":"hello"})"), Contains("version 1, this nicmatrix speaks version 2"));
    CHECK_THROWS_WITH(nm::decode_control_message(R"({"type":"hello"})"), Contains("version missing"));
    CHECK_THROWS_WITH(nm::decode_control_message(R"({"v":[[[1]]],"type":"hello"})"), Contains("version not a number"));
    CHECK_THROWS_WITH(nm::decode_control_message(R"({"v":2})"), Contains("no \"type\""));
    CHECK_THROWS_WITH(nm::decode_control_message(R"([1,2])"), Contains("not a JSON object"));
    CHECK_THROWS_WITH(nm::decode_control_message("{\"v\":2,"), Contains("not a JSON object"));
    const std::string big = R"({"v":2,"type":"x","pad":")" + std::string(nm::kMaxControlMessage, 'a') + "\"}";
    CHECK_THROWS_WITH(nm::decode_control_message(big), Contains("longer than"));
}

TEST_CASE("decode_control_message counts nesting on the text before parsing: 32 levels pass, 33 and 30000 do not", "[unit]") {
    const auto nested = [](size_t levels, const std::string& open, const std::string& close) {
        std::string s = R"({"v":2,"type":"request","x":)";
        for (size_t i = 1; i < levels; ++i) s += open;
        s += "0";
        for (size_t i = 1; i < levels; ++i) s += close;
        return s + "}";
    };
    CHECK(nm::decode_control_message(nested(32, "[", "]")).at("type") == "request");
    CHECK_THROWS_WITH(nm::decode_control_message(nested(33, "[", "]")), Contains("nested deeper than 32 levels"));
    CHECK_THROWS_WITH(nm::decode_control_message(nested(33, R"({"a":)", "}")), Contains("nested deeper than 32 levels"));
    // 30000 levels in under 64 KiB, unbalanced as an attacker would not bother to close them.
    std::string deep = R"({"v":2,"type":"request","x":)" + std::string(30000, '[');
    REQUIRE(deep.size() < nm::kMaxControlMessage);
    CHECK_THROWS_WITH(nm::decode_control_message(deep), Contains("nested deeper"));
    // Brackets inside strings, escaped quotes included, are text.
    const std::string in_strings = R"({"v":2,"type":"request","x":"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["})";
    CHECK(nm::decode_control_message(in_strings).at("type") == "request");
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
        const std::string junk(nm::kMaxControlMessage + 10, 'x');  // no newline at all
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
        rx2.send(nm::Msg::Sent, nm::Json::object(), soon(1000));
        rx2.send(nm::Msg::Sent, nm::Json::object(), soon(1000));
        FAIL("no error sending to a closed peer");
    } catch (const nm::Error& e) {
        CHECK(e.kind() == nm::ErrorKind::Closed);
    }
}

TEST_CASE("decode_control_message reads the version exactly: a wrapping or float version is refused (review L4)", "[unit]") {
    CHECK_THROWS_WITH(nm::decode_control_message(R"({"v":4294967297,"type":"hello"})"), Contains("version 4294967297"));
    CHECK_THROWS_WITH(nm::decode_control_message(R"({"v":1.0,"type":"hello"})"), Contains("version 1.0"));
    CHECK_THROWS(nm::decode_control_message(R"({"v":-1,"type":"hello"})"));
}

TEST_CASE("A signed channel: sequence numbers and MACs both ways, tampering, replay and another key refused", "[unit]") {
    const nm::ChannelKeys client_keys{"to-server-key", "to-client-key", "c->s", "s->c"};
    const nm::ChannelKeys server_keys{"to-client-key", "to-server-key", "s->c", "c->s"};
    Pair p;
    nm::ControlChannel client(std::move(p.a));
    nm::ControlChannel server(std::move(p.b));
    client.sign_with(client_keys);
    server.sign_with(server_keys);
    client.send(nm::Msg::Start, nm::Json{{"udp_port", 4000}}, soon(1000));
    const auto start = server.receive(soon(1000));
    REQUIRE(start);
    CHECK(start->at("seq") == 1);
    CHECK(start->contains("mac"));
    server.send(nm::Msg::Started, nm::Json::object(), soon(1000));
    CHECK(client.receive(soon(1000))->at("seq") == 1);
    client.send(nm::Msg::Sent, nm::Json::object(), soon(1000));
    CHECK(server.receive(soon(1000))->at("seq") == 2);

    // What a relay in the middle might try, written straight onto the socket.
    const auto raw = [&](nm::Json m) {
        const auto line = nm::encode_control_message(std::move(m));
        nm::send_all(client.fd(), line.data(), line.size(), soon(1000), "raw");
    };
    nm::Json replayed = *start;  // seq 1 again
    raw(replayed);
    CHECK_THROWS_WITH(server.receive(soon(1000)), Contains("wrong MAC or sequence number"));
    nm::Json tampered = *start;
    tampered["seq"] = 3;
    tampered["udp_port"] = 9;
    raw(tampered);
    CHECK_THROWS_WITH(server.receive(soon(1000)), Contains("wrong MAC"));
    nm::Json unsigned_start{{"type", "start"}, {"seq", 3}};
    raw(unsigned_start);
    CHECK_THROWS_WITH(server.receive(soon(1000)), Contains("not from the holder of the key"));
    // An error the peer could not sign keeps its text, marked as unproven.
    raw(nm::Json{{"type", "error"}, {"kind", "auth"}, {"message", "authentication failed"}});
    CHECK_THROWS_WITH(server.receive(soon(1000)), Contains("authentication failed (an unauthenticated error message)"));

    Pair q;
    nm::ControlChannel a(std::move(q.a));
    nm::ControlChannel b(std::move(q.b));
    a.sign_with({"one key", "x", "c->s", "s->c"});  // the labels agree: only the key differs
    b.sign_with({"y", "another key", "s->c", "c->s"});
    a.send(nm::Msg::Start, nm::Json::object(), soon(1000));
    CHECK_THROWS(b.receive(soon(1000)));
}

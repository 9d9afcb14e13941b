#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "core/control/control_protocol.hpp"

TEST_CASE("Every message type has one name on the wire, and the name reads back as the type", "[unit]") {
    std::set<std::string> names;
    for (int i = 0; i <= static_cast<int>(nm::Msg::Auth); ++i) {
        const auto m = static_cast<nm::Msg>(i);
        const std::string name(nm::msg_name(m));
        CHECK(name != "?");
        CHECK(names.insert(name).second);
        CHECK(nm::msg_from_name(name) == m);
        CHECK(nm::is(nm::Json{{"type", name}}, m));
    }
    CHECK(nm::msg_name(nm::Msg::ResultPart) == "result_part");
    CHECK_FALSE(nm::msg_from_name("bogus"));
    CHECK_FALSE(nm::msg_from_name("rolled_back"));  // the peer agent's (agent/agent_protocol.hpp: AgentMsg)
    CHECK_FALSE(nm::msg_type(nm::Json{{"type", 3}}));
    CHECK_FALSE(nm::msg_type(nm::Json::array()));
}

TEST_CASE("DataHeader encodes magic, cookie and id, and refuses other bytes", "[unit]") {
    const nm::DataHeader h{0xdeadbeef, 7};
    const auto bytes = h.encode();
    CHECK(std::string(bytes.begin(), bytes.begin() + 4) == "NMD1");
    const auto back = nm::DataHeader::decode(bytes);
    REQUIRE(back);
    CHECK(back->cookie == 0xdeadbeef);
    CHECK(back->id == 7);
    auto bad = bytes;
    bad[3] = '2';
    CHECK_FALSE(nm::DataHeader::decode(bad));
}

TEST_CASE("One table maps wire error kinds to ErrorKind and back", "[unit]") {
    CHECK(nm::error_kind(nm::WireError::Usage) == nm::ErrorKind::Usage);
    for (auto w :
         {nm::WireError::Refused, nm::WireError::Busy, nm::WireError::Auth, nm::WireError::Replay, nm::WireError::Limit, nm::WireError::Expired}) {
        CHECK(nm::error_kind(w) == nm::ErrorKind::Refused);
    }
    CHECK(nm::error_kind(nm::WireError::Protocol) == nm::ErrorKind::Failed);
    CHECK(nm::error_kind(nm::WireError::Failed) == nm::ErrorKind::Failed);
    // Every ErrorKind goes out as a kind that comes back as itself (Closed is a Failed).
    for (auto k : {nm::ErrorKind::Usage, nm::ErrorKind::Refused, nm::ErrorKind::Failed}) CHECK(nm::error_kind(nm::wire_error(k)) == k);
    CHECK(nm::error_kind(nm::wire_error(nm::ErrorKind::Closed)) == nm::ErrorKind::Failed);
    for (auto w : {nm::WireError::Usage, nm::WireError::Busy, nm::WireError::Limit, nm::WireError::Expired, nm::WireError::Protocol}) {
        CHECK(nm::wire_error_from_name(nm::wire_error_name(w)) == w);
    }
    CHECK(nm::wire_error_from_name("from-a-newer-build") == nm::WireError::Failed);
}

TEST_CASE("An error message becomes the nm::Error it stands for", "[unit]") {
    const auto e = nm::error_from_message(nm::Json{{"type", "error"}, {"kind", "busy"}, {"message", "a test is running"}}, "server 198.18.0.2:5301");
    CHECK(e.kind() == nm::ErrorKind::Refused);
    CHECK(std::string(e.what()) == "server 198.18.0.2:5301: a test is running");
    const auto bare = nm::error_from_message(nm::Json{{"type", "error"}}, "peer agent x");
    CHECK(bare.kind() == nm::ErrorKind::Failed);
    CHECK(std::string(bare.what()) == "peer agent x: error");
}

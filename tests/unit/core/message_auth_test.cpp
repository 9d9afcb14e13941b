#include <catch2/catch.hpp>

#include "core/message_auth.hpp"

TEST_CASE("HMAC-SHA256 matches RFC 4231 test case 2", "[unit]") {
    CHECK(nm::hmac_sha256_hex("Jefe", "what do ya want for nothing?") == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST_CASE("Signed messages verify, any change, a missing MAC or another key does not", "[unit]") {
    const std::string key = "session key, 32 bytes long......";
    nm::Json m{{"type", "request"}, {"seq", 7}, {"op", "apply"}, {"settings", {{"mtu", 9000}}}};
    nm::sign_message(m, key, "client->agent");
    CHECK(nm::verify_message(m, key, "client->agent"));
    m["v"] = 1;   // the channel adds the version after signing
    CHECK(nm::verify_message(m, key, "client->agent"));
    CHECK_FALSE(nm::verify_message(m, "another key, 32 bytes long......", "client->agent"));
    // The same message reflected back in the other direction does not verify.
    CHECK_FALSE(nm::verify_message(m, key, "agent->client"));
    nm::Json altered = m;
    altered["seq"] = 8;
    CHECK_FALSE(nm::verify_message(altered, key, "client->agent"));
    nm::Json bare = m;
    bare.erase("mac");
    CHECK_FALSE(nm::verify_message(bare, key, "client->agent"));
    CHECK_FALSE(nm::verify_message(nm::Json::array(), key, "client->agent"));
    // A string that is not UTF-8 fails the MAC instead of throwing.
    nm::Json bad = m;
    bad["op"] = std::string("\xff\xfe");
    CHECK_FALSE(nm::verify_message(bad, key, "client->agent"));
}

TEST_CASE("Handshake proofs differ by role and nonce, nonces are fresh", "[unit]") {
    const std::string key = "0123456789abcdef";
    const auto n1 = nm::random_hex(32);
    const auto n2 = nm::random_hex(32);
    CHECK(n1.size() == 64);
    CHECK(n1 != n2);
    CHECK(nm::handshake_proof(key, n1, n2, "client") != nm::handshake_proof(key, n1, n2, "agent"));
    CHECK(nm::handshake_proof(key, n1, n2, "client") != nm::handshake_proof(key, n2, n1, "client"));
    // The transcript (the agent's challenge fields) is part of the proof.
    CHECK(nm::handshake_proof(key, n1, n2, "agent", R"({"control":true})") != nm::handshake_proof(key, n1, n2, "agent", R"({"control":false})"));
    CHECK(nm::handshake_proof(key, n1, n2, "agent", R"({"control":true})") == nm::handshake_proof(key, n1, n2, "agent", R"({"control":true})"));
    CHECK(nm::macs_equal("abc", "abc"));
    CHECK_FALSE(nm::macs_equal("abc", "abd"));
    CHECK_FALSE(nm::macs_equal("abc", "abcd"));
}

TEST_CASE("is_hex wants exactly the length in lowercase hex digits", "[unit]") {
    CHECK(nm::is_hex("00ff", 4));
    CHECK_FALSE(nm::is_hex("00FF", 4));
    CHECK_FALSE(nm::is_hex("00f", 4));
    CHECK_FALSE(nm::is_hex("00fg", 4));
}

#include <catch2/catch.hpp>

#include <cctype>
#include <string>

#include "core/control/message_auth.hpp"

TEST_CASE("HMAC-SHA256 matches RFC 4231 test case 2", "[unit]") {
    CHECK(nm::hmac_sha256_hex("Jefe", "what do ya want for nothing?") == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST_CASE("Signed lines verify on their bytes, any change, a missing MAC or another key does not", "[unit]") {
    const std::string key = "session key, 32 bytes long......";
    const std::string text = R"({"op":"apply","seq":7,"settings":{"mtu":9000},"type":"request","v":2})";
    const std::string line = nm::sign_text(text, key, "client->agent");
    // The MAC is the last member; the rest of the line is the text as given, byte for byte.
    CHECK(line.starts_with(text.substr(0, text.size() - 1) + R"(,"mac":")"));
    CHECK(line.size() == text.size() - 1 + 8 + 64 + 2);  // the closing brace, then ,"mac":" hex "}
    CHECK(nm::verify_text(line, key, "client->agent"));
    CHECK_FALSE(nm::verify_text(line, "another key, 32 bytes long......", "client->agent"));
    // The same message reflected back in the other direction does not verify.
    CHECK_FALSE(nm::verify_text(line, key, "agent->client"));
    std::string altered = line;
    altered.replace(altered.find("\"seq\":7"), 7, "\"seq\":8");
    CHECK_FALSE(nm::verify_text(altered, key, "client->agent"));
    // Bytes that would parse to the same JSON (a space, another key order) are another message.
    std::string spaced = line;
    spaced.insert(1, " ");
    CHECK_FALSE(nm::verify_text(spaced, key, "client->agent"));
    CHECK_FALSE(nm::verify_text(text, key, "client->agent"));
    CHECK_FALSE(nm::verify_text("", key, "client->agent"));
    CHECK_FALSE(nm::verify_text(line.substr(0, line.size() - 1), key, "client->agent"));
    std::string upper = line;
    for (size_t i = upper.size() - 66; i < upper.size() - 2; ++i) upper[i] = static_cast<char>(std::toupper(static_cast<unsigned char>(upper[i])));
    CHECK_FALSE(nm::verify_text(upper, key, "client->agent"));
    // Bytes that are not UTF-8 are just bytes: signed and checked like any others.
    const std::string raw = nm::sign_text("{\"op\":\"\xff\xfe\"}", key, "client->agent");
    CHECK(nm::verify_text(raw, key, "client->agent"));
    CHECK_THROWS(nm::sign_text("[1,2]", key, "client->agent"));
    CHECK_THROWS(nm::sign_text("{}", key, "client->agent"));
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

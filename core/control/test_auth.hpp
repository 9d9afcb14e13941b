#pragma once
// Authentication of a traffic test against a server that holds a key (serve --key-file): a challenge-
// response over two fresh nonces, then a MAC and a sequence number on every message of the test, each
// direction under its own key (core/control/message_auth.hpp gives the primitives; the key file is read one
// layer up). The exchange, after the client's hello {spec, client_nonce}:
//
//   client                                      server
//                                      <-       challenge {nonce}
//   auth {spec, seq 1, mac}            ->       (the spec the test runs is this one, not hello's)
//                                      <-       ready {..., seq 1, mac}   | error {kind "auth"}
//   every later message, both ways: {..., seq n+1, mac}
//
// A relay that passes the messages on cannot change one (the MACs), replay one (the sequence numbers),
// or reuse one on another connection (the nonces).
#include <string>
#include <string_view>

#include "core/control/control_channel.hpp"

namespace nm {

/// The two ends of a test, for the direction of its keys.
enum class TestRole { Client, Server };

/// The keys of one test's control channel as `role` uses them (send = its own direction's key), derived
/// from the pre-shared `key` and both nonces with the direction in the label.
ChannelKeys test_channel_keys(std::string_view key, std::string_view nonce, std::string_view client_nonce, TestRole role);

}  // namespace nm

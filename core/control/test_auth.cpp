#include "core/control/test_auth.hpp"

#include "core/control/message_auth.hpp"

namespace nm {

ChannelKeys test_channel_keys(std::string_view key, std::string_view nonce, std::string_view client_nonce, TestRole role) {
    // handshake_proof is HMAC(key, nonce || client_nonce || label): a different label, a different key.
    std::string to_server = handshake_proof(key, nonce, client_nonce, "test client->server");
    std::string to_client = handshake_proof(key, nonce, client_nonce, "test server->client");
    if (role == TestRole::Client) return {std::move(to_server), std::move(to_client), "test client->server", "test server->client"};
    return {std::move(to_client), std::move(to_server), "test server->client", "test client->server"};
}

}  // namespace nm

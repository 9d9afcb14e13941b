// Fuzzes what the agent and the server do with a line from the network: decode it, then read the fields
// a test's hello and a settings request carry. Every failure must be an nm::Error, a JSON exception or an
// agent refusal; the sanitizers catch the rest.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "agent/agent_protocol.hpp"
#include "core/base/error.hpp"
#include "core/base/json_integer.hpp"
#include "core/control/control_channel.hpp"
#include "core/control/message_auth.hpp"
#include "core/device/device_codec.hpp"
#include "core/traffic/traffic_codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view line(reinterpret_cast<const char*>(data), size);
    try {
        const nm::Json j = nm::decode_control_message(line);
        if (j.contains("spec")) (void)j.at("spec").get<nm::TestSpec>();
        if (j.contains("settings")) (void)j.at("settings").get<nm::LinkSettings>();
        if (j.contains("report")) (void)j.at("report").get<nm::ApplyReport>();
        if (j.contains("state")) (void)j.at("state").get<nm::LinkState>();
        if (j.contains("seq")) (void)nm::checked_integer<uint64_t>(j.at("seq"), "seq");
        try {
            (void)nm::parse_agent_request(j);
        } catch (const nm::AgentRefusal&) {}
        (void)nm::verify_text(line, "key", "client->agent");
        (void)nm::encode_control_message(j);
    } catch (const nm::Error&) {
    } catch (const nlohmann::json::exception&) {}
    return 0;
}

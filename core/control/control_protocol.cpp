#include "core/control/control_protocol.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <utility>

namespace nm {
namespace {

// Every Msg's name on the wire, in the enum's order.
constexpr std::string_view kMessages[] = {"hello", "ready",  "start",       "started", "sent",      "stalled",
                                          "abort", "result", "result_part", "error",   "challenge", "auth"};
static_assert(std::size(kMessages) == static_cast<size_t>(Msg::Auth) + 1, "a name for every Msg");

struct WireErrorRow {
    WireError wire;
    std::string_view name;
    ErrorKind kind;
};

// The one table between the wire's error kinds and nm::ErrorKind.
constexpr WireErrorRow kWireErrors[] = {
    {WireError::Usage, "usage", ErrorKind::Usage},       {WireError::Refused, "refused", ErrorKind::Refused},
    {WireError::Busy, "busy", ErrorKind::Refused},       {WireError::Auth, "auth", ErrorKind::Refused},
    {WireError::Replay, "replay", ErrorKind::Refused},   {WireError::Limit, "limit", ErrorKind::Refused},
    {WireError::Expired, "expired", ErrorKind::Refused}, {WireError::Protocol, "protocol", ErrorKind::Failed},
    {WireError::Failed, "failed", ErrorKind::Failed},
};

}  // namespace

std::string_view msg_name(Msg type) {
    const auto i = static_cast<size_t>(type);
    return i < std::size(kMessages) ? kMessages[i] : "?";
}

std::optional<Msg> msg_from_name(std::string_view name) {
    const auto at = std::find(std::begin(kMessages), std::end(kMessages), name);
    if (at == std::end(kMessages)) return std::nullopt;
    return static_cast<Msg>(at - std::begin(kMessages));
}

std::optional<std::string_view> msg_type_name(const Json& message) {
    if (!message.is_object()) return std::nullopt;
    const auto it = message.find("type");
    if (it == message.end() || !it->is_string()) return std::nullopt;
    return std::string_view(it->get_ref<const std::string&>());
}

std::optional<Msg> msg_type(const Json& message) {
    const auto name = msg_type_name(message);
    return name ? msg_from_name(*name) : std::nullopt;
}

bool is(const Json& message, Msg type) { return msg_type(message) == type; }

std::array<unsigned char, DataHeader::kSize> DataHeader::encode() const {
    std::array<unsigned char, kSize> out{};
    std::memcpy(out.data(), kMagic.data(), kMagic.size());
    std::memcpy(out.data() + 4, &cookie, 4);
    std::memcpy(out.data() + 8, &id, 4);
    return out;
}

std::optional<DataHeader> DataHeader::decode(std::span<const unsigned char, kSize> bytes) {
    if (std::memcmp(bytes.data(), kMagic.data(), kMagic.size()) != 0) return std::nullopt;
    DataHeader h;
    std::memcpy(&h.cookie, bytes.data() + 4, 4);
    std::memcpy(&h.id, bytes.data() + 8, 4);
    return h;
}

Deadline deadline_in(std::chrono::milliseconds d) { return std::chrono::steady_clock::now() + d; }

std::string_view wire_error_name(WireError kind) {
    for (const auto& row : kWireErrors) {
        if (row.wire == kind) return row.name;
    }
    return "failed";
}

WireError wire_error_from_name(std::string_view name) {
    for (const auto& row : kWireErrors) {
        if (row.name == name) return row.wire;
    }
    return WireError::Failed;
}

ErrorKind error_kind(WireError kind) {
    for (const auto& row : kWireErrors) {
        if (row.wire == kind) return row.kind;
    }
    return ErrorKind::Failed;
}

WireError wire_error(ErrorKind kind) {
    switch (kind) {
        case ErrorKind::Usage: return WireError::Usage;
        case ErrorKind::Refused: return WireError::Refused;
        case ErrorKind::Failed:
        case ErrorKind::Closed: return WireError::Failed;
    }
    return WireError::Failed;
}

WireError wire_error_of(const Json& message) {
    const auto it = message.find("kind");
    if (it == message.end() || !it->is_string()) return WireError::Failed;
    return wire_error_from_name(it->get_ref<const std::string&>());
}

Error error_from_message(const Json& message, const std::string& who) {
    std::string text = "error";
    if (const auto it = message.find("message"); it != message.end() && it->is_string()) text = it->get<std::string>();
    return Error(error_kind(wire_error_of(message)), who + ": " + text);
}

}  // namespace nm

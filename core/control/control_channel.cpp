#include "core/control/control_channel.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>

#include "core/base/error.hpp"
#include "core/control/message_auth.hpp"

namespace nm {

// Counted on the bytes before anything is parsed: nesting costs the parser's, a copy's and a dump's stack
// or heap, and text from a peer that has not proved anything must not decide how much.
bool nesting_within(std::string_view text, size_t limit) {
    size_t depth = 0;
    bool in_string = false;
    bool escaped = false;
    for (const char c : text) {
        if (in_string) {
            if (escaped) escaped = false;
            else if (c == '\\') escaped = true;
            else if (c == '"') in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '{' || c == '[') {
            if (++depth > limit) return false;
        } else if ((c == '}' || c == ']') && depth > 0) {
            --depth;
        }
    }
    return true;
}

Json decode_control_message(std::string_view line) {
    if (line.size() > kMaxControlMessage) {
        throw Error(ErrorKind::Failed, "control message: longer than " + std::to_string(kMaxControlMessage) + " bytes");
    }
    if (!nesting_within(line, kMaxControlDepth)) {
        throw Error(ErrorKind::Failed, "control message: nested deeper than " + std::to_string(kMaxControlDepth) + " levels");
    }
    Json j = Json::parse(line.begin(), line.end(), nullptr, false);
    if (j.is_discarded() || !j.is_object()) throw Error(ErrorKind::Failed, "control message: not a JSON object");
    const auto v = j.find("v");
    // Only the exact unsigned integer: a wrapping value (4294967297) or a float must not read as 1. Only
    // a number is quoted back (a scalar's dump), never a peer's array or object.
    if (v == j.end() || !v->is_number_unsigned() || v->get<uint64_t>() != static_cast<uint64_t>(kControlVersion)) {
        throw Error(ErrorKind::Failed, "control message: protocol version " +
                                           (v == j.end()     ? std::string("missing")
                                            : v->is_number() ? v->dump()
                                                             : std::string("not a number")) +
                                           ", this nicmatrix speaks version " + std::to_string(kControlVersion));
    }
    const auto type = j.find("type");
    if (type == j.end() || !type->is_string()) throw Error(ErrorKind::Failed, "control message: no \"type\"");
    return j;
}

std::string encode_control_message(Json body) {
    body["v"] = kControlVersion;
    std::string line = body.dump();
    line += '\n';
    return line;
}

std::string encode_signed_message(Json body, std::string_view key, std::string_view direction) {
    body["v"] = kControlVersion;
    std::string line = sign_text(body.dump(), key, direction);
    line += '\n';
    return line;
}

ControlChannel::ControlChannel(UniqueFd fd) : fd_(std::move(fd)) { set_nonblocking(fd_.get(), true); }

void ControlChannel::sign_with(ChannelKeys keys, uint64_t sent, uint64_t received) {
    keys_ = std::move(keys);
    sent_ = sent;
    received_ = received;
}

Json ControlChannel::verified(std::string_view text) {
    // The MAC is checked on the bytes as received, before the message is decoded.
    const bool signed_by_peer = verify_text(text, keys_->receive, keys_->receive_direction);
    Json message = decode_control_message(text);
    const auto seq = message.find("seq");
    const bool in_order = seq != message.end() && seq->is_number_unsigned() && seq->get<uint64_t>() == received_ + 1;
    if (signed_by_peer && in_order) {
        ++received_;
        return message;
    }
    if (is(message, Msg::Error)) {
        // A refusal the peer could not sign, or signed with a key we do not share (a wrong key): its text
        // says why; it proves nothing, and it only ends what was going on.
        std::string why = "error";
        if (const auto it = message.find("message"); it != message.end() && it->is_string()) why = it->get<std::string>();
        throw Error(ErrorKind::Failed, why + " (an unauthenticated error message)");
    }
    throw Error(ErrorKind::Failed, "control message \"" + std::string(msg_type(message) ? msg_name(*msg_type(message)) : "?") +
                                       "\": wrong MAC or sequence number (not from the holder of the key)");
}

void ControlChannel::send(std::string_view type, Json body, Deadline deadline) {
    if (body.is_null()) body = Json::object();
    body["type"] = type;
    if (keys_) {
        body["seq"] = ++sent_;
        send_line(encode_signed_message(std::move(body), keys_->send, keys_->send_direction), type, deadline);
        return;
    }
    send_line(encode_control_message(std::move(body)), type, deadline);
}

void ControlChannel::send_signed(std::string_view type, Json body, std::string_view key, std::string_view direction, Deadline deadline) {
    if (body.is_null()) body = Json::object();
    body["type"] = type;
    send_line(encode_signed_message(std::move(body), key, direction), type, deadline);
}

void ControlChannel::send_line(std::string_view line, std::string_view type, Deadline deadline) {
    try {
        send_all(fd_.get(), line.data(), line.size(), deadline, "send control message \"" + std::string(type) + "\"");
    } catch (const Error& e) {
        if (e.code() == std::errc::broken_pipe || e.code() == std::errc::connection_reset)
            throw Error(ErrorKind::Closed, e.action(), e.code(), e.context());
        throw;
    }
}

std::optional<Json> ControlChannel::receive(Deadline deadline) {
    auto received = receive_text(deadline);
    if (!received) return std::nullopt;
    return std::move(received->message);
}

std::optional<ReceivedMessage> ControlChannel::receive_text(Deadline deadline) {
    for (;;) {
        const size_t nl = buffer_.find('\n');
        if (nl != std::string::npos) {
            ReceivedMessage r;
            r.text = buffer_.substr(0, nl);
            buffer_.erase(0, nl + 1);
            r.message = keys_ ? verified(r.text) : decode_control_message(r.text);
            return r;
        }
        if (buffer_.size() > kMaxControlMessage) {
            throw Error(ErrorKind::Failed, "control message: longer than " + std::to_string(kMaxControlMessage) + " bytes");
        }
        char chunk[8192];
        const ssize_t n = ::recv(fd_.get(), chunk, sizeof chunk, MSG_DONTWAIT);
        if (n > 0) {
            buffer_.append(chunk, static_cast<size_t>(n));
            continue;
        }
        if (n == 0) throw Error(ErrorKind::Closed, "control connection closed by peer");
        if (errno == EINTR) continue;
        if (errno == ECONNRESET) throw Error(ErrorKind::Closed, "control connection reset by peer");
        if (errno != EAGAIN && errno != EWOULDBLOCK) throw system_error("control connection", errno);
        if (!wait_fd(fd_.get(), POLLIN, deadline)) return std::nullopt;
    }
}

Json ControlChannel::expect(Deadline deadline, const std::string& waiting_for) {
    auto j = receive(deadline);
    if (!j) throw Error(ErrorKind::Failed, "timed out waiting for " + waiting_for);
    return std::move(*j);
}

void send_error(ControlChannel& channel, WireError kind, const std::string& message, std::optional<uint64_t> seq) {
    Json body{{"kind", wire_error_name(kind)}, {"message", message}};
    if (seq) body["seq"] = *seq;
    try {
        channel.send(Msg::Error, std::move(body), deadline_in(kNoticeTimeout));
    } catch (const Error&) {
        // The peer is gone; there is nobody to tell.
    }
}

void send_error(ControlChannel& channel, const Error& error, std::optional<uint64_t> seq) {
    send_error(channel, wire_error(error.kind()), error.what(), seq);
}

}  // namespace nm

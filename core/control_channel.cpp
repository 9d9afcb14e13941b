#include "core/control_channel.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>

#include "core/base/error.hpp"
#include "core/message_auth.hpp"

namespace nm {

Json decode_control_message(std::string_view line) {
    if (line.size() > kMaxControlMessage) {
        throw Error(ErrorKind::Failed, "control message: longer than " + std::to_string(kMaxControlMessage) + " bytes");
    }
    Json j = Json::parse(line.begin(), line.end(), nullptr, false);
    if (j.is_discarded() || !j.is_object()) throw Error(ErrorKind::Failed, "control message: not a JSON object");
    const auto v = j.find("v");
    // Only the exact unsigned integer: a wrapping value (4294967297) or a float must not read as 1.
    if (v == j.end() || !v->is_number_unsigned() || v->get<uint64_t>() != static_cast<uint64_t>(kControlVersion)) {
        throw Error(ErrorKind::Failed, "control message: protocol version " + (v == j.end() ? std::string("missing") : v->dump()) +
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

ControlChannel::ControlChannel(UniqueFd fd) : fd_(std::move(fd)) { set_nonblocking(fd_.get(), true); }

void ControlChannel::sign_with(ChannelKeys keys, uint64_t sent, uint64_t received) {
    keys_ = std::move(keys);
    sent_ = sent;
    received_ = received;
}

Json ControlChannel::verified(Json message) {
    if (!keys_) return message;
    const auto seq = message.find("seq");
    const bool in_order = seq != message.end() && seq->is_number_unsigned() && seq->get<uint64_t>() == received_ + 1;
    if (in_order && verify_message(message, keys_->receive, keys_->receive_direction)) {
        ++received_;
        return message;
    }
    if (is(message, Msg::Error)) {
        // A refusal the peer could not sign, or signed with a key we do not share (a wrong key): its text
        // says why; it proves nothing, and it only ends what was going on.
        std::string text = "error";
        if (const auto it = message.find("message"); it != message.end() && it->is_string()) text = it->get<std::string>();
        throw Error(ErrorKind::Failed, text + " (an unauthenticated error message)");
    }
    throw Error(ErrorKind::Failed, "control message \"" + std::string(msg_type(message) ? msg_name(*msg_type(message)) : "?") +
                                       "\": wrong MAC or sequence number (not from the holder of the key)");
}

void ControlChannel::send(Msg type, Json body, Deadline deadline) {
    if (body.is_null()) body = Json::object();
    body["type"] = msg_name(type);
    if (keys_) {
        body["seq"] = ++sent_;
        sign_message(body, keys_->send, keys_->send_direction);
    }
    const std::string line = encode_control_message(std::move(body));
    try {
        send_all(fd_.get(), line.data(), line.size(), deadline, "send control message \"" + std::string(msg_name(type)) + "\"");
    } catch (const Error& e) {
        if (e.code() == std::errc::broken_pipe || e.code() == std::errc::connection_reset) throw Error(ErrorKind::Closed, e.action(), e.code(), e.context());
        throw;
    }
}

std::optional<Json> ControlChannel::receive(Deadline deadline) {
    for (;;) {
        const size_t nl = buffer_.find('\n');
        if (nl != std::string::npos) {
            Json j = decode_control_message(std::string_view(buffer_).substr(0, nl));
            buffer_.erase(0, nl + 1);
            return verified(std::move(j));
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

}  // namespace nm

#include "ethtool_ctl/netlink_socket.hpp"

#include <linux/genetlink.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "core/base/error.hpp"

namespace nm::nl {
namespace {

constexpr size_t kRequestBuffer = size_t{16} * 1024;

Error full(uint16_t type) {
    return Error(ErrorKind::Failed, "build netlink request: no room for attribute " + std::to_string(type),
                 std::make_error_code(std::errc::message_size));
}

constexpr AttrPolicy kErrAttrs[] = {{NLMSGERR_ATTR_MSG, AttrType::String}};

// The kernel's extended ack text: NLMSGERR_ATTR_MSG after the nlmsgerr (which carries the whole
// original request unless NLM_F_CAPPED says only its header was echoed).
std::string extack_text(const nlmsghdr* hdr) {
    if (!(hdr->nlmsg_flags & NLM_F_ACK_TLVS)) return {};
    const auto* err = static_cast<const nlmsgerr*>(mnl_nlmsg_get_payload(hdr));
    size_t offset = NLMSG_HDRLEN + sizeof(nlmsgerr);
    if (!(hdr->nlmsg_flags & NLM_F_CAPPED)) offset += NLMSG_ALIGN(err->msg.nlmsg_len) - NLMSG_HDRLEN;
    if (offset >= hdr->nlmsg_len) return {};
    const Bytes tlvs(reinterpret_cast<const uint8_t*>(hdr) + offset, hdr->nlmsg_len - offset);
    const auto attrs = parse_attrs<NLMSGERR_ATTR_MSG>(tlvs, kErrAttrs, "extended ack");
    return attrs[NLMSGERR_ATTR_MSG] ? attr_string(attrs[NLMSGERR_ATTR_MSG]) : std::string();
}

}  // namespace

Nest::~Nest() {
    if (start_ != nullptr) mnl_attr_nest_cancel(req_->header(), start_);
}

void Nest::close() noexcept {
    if (start_ != nullptr) mnl_attr_nest_end(req_->header(), start_);
    start_ = nullptr;
}

NlRequest::NlRequest() : buf_(kRequestBuffer, 0) {}

NlRequest NlRequest::genl(uint16_t family, uint8_t cmd, uint8_t version, uint16_t flags) {
    NlRequest req;
    nlmsghdr* hdr = mnl_nlmsg_put_header(req.buf_.data());
    hdr->nlmsg_type = family;
    hdr->nlmsg_flags = NLM_F_REQUEST | flags;
    auto* genl = static_cast<genlmsghdr*>(mnl_nlmsg_put_extra_header(hdr, sizeof(genlmsghdr)));
    genl->cmd = cmd;
    genl->version = version;
    return req;
}

NlRequest NlRequest::plain(uint16_t type, uint16_t flags, size_t header_len) {
    NlRequest req;
    nlmsghdr* hdr = mnl_nlmsg_put_header(req.buf_.data());
    hdr->nlmsg_type = type;
    hdr->nlmsg_flags = NLM_F_REQUEST | flags;
    mnl_nlmsg_put_extra_header(hdr, header_len);
    return req;
}

void NlRequest::put_u32(uint16_t type, uint32_t value) {
    if (!mnl_attr_put_u32_check(header(), buf_.size(), type, value)) throw full(type);
}

void NlRequest::put_strz(uint16_t type, std::string_view value) {
    const std::string copy(value);
    if (!mnl_attr_put_strz_check(header(), buf_.size(), type, copy.c_str())) throw full(type);
}

void NlRequest::put_flag(uint16_t type) {
    if (!mnl_attr_put_check(header(), buf_.size(), type, 0, nullptr)) throw full(type);
}

void NlRequest::put_binary(uint16_t type, const void* data, size_t len) {
    if (!mnl_attr_put_check(header(), buf_.size(), type, len, data)) throw full(type);
}

Nest NlRequest::nest(uint16_t type) {
    nlattr* start = mnl_attr_nest_start_check(header(), buf_.size(), type);
    if (start == nullptr) throw full(type);
    return Nest(*this, start);
}

NetlinkSocket::NetlinkSocket(std::unique_ptr<mnl_socket, Closer> sock) : sock_(std::move(sock)) { port_id_ = mnl_socket_get_portid(sock_.get()); }

NetlinkSocket NetlinkSocket::open(int bus) {
    std::unique_ptr<mnl_socket, Closer> sock(mnl_socket_open2(bus, SOCK_CLOEXEC));
    if (!sock) throw system_error("open netlink socket", errno);
    if (mnl_socket_bind(sock.get(), 0, MNL_SOCKET_AUTOPID) < 0) throw system_error("bind netlink socket", errno);
    // Extended acks carry the kernel's reason ("mtu greater than device maximum"); capped acks keep
    // error messages small instead of echoing the whole request back.
    int on = 1;
    if (mnl_socket_setsockopt(sock.get(), NETLINK_EXT_ACK, &on, sizeof on) < 0) {
        throw system_error("enable NETLINK_EXT_ACK", errno);
    }
    mnl_socket_setsockopt(sock.get(), NETLINK_CAP_ACK, &on, sizeof on);
    return NetlinkSocket(std::move(sock));
}

uint32_t NetlinkSocket::send(NlRequest& req) {
    const uint32_t seq = next_seq_++;
    req.header()->nlmsg_seq = seq;
    req.header()->nlmsg_pid = port_id_;
    const auto bytes = req.bytes();
    if (mnl_socket_sendto(sock_.get(), bytes.data(), bytes.size()) < 0) throw system_error("send netlink request", errno);
    return seq;
}

void NetlinkSocket::receive_until_ack(uint32_t seq, const MessageHandler& on_message) {
    std::vector<uint8_t> buf(32768);  // the kernel caps dump chunks at 32 KiB
    for (;;) {
        const ssize_t n = mnl_socket_recvfrom(sock_.get(), buf.data(), buf.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            throw system_error("receive netlink reply", errno);
        }
        int remaining = static_cast<int>(n);
        for (auto* hdr = reinterpret_cast<const nlmsghdr*>(buf.data()); mnl_nlmsg_ok(hdr, remaining); hdr = mnl_nlmsg_next(hdr, &remaining)) {
            // Notifications and stale replies share the socket only by accident; ignore them.
            if (hdr->nlmsg_seq != seq || (hdr->nlmsg_pid != port_id_ && hdr->nlmsg_pid != 0)) continue;
            const Bytes message(reinterpret_cast<const uint8_t*>(hdr), hdr->nlmsg_len);
            if (tap_) tap_(message);
            if (hdr->nlmsg_type == NLMSG_ERROR) {
                if (hdr->nlmsg_len < NLMSG_HDRLEN + sizeof(nlmsgerr)) {
                    throw Error(ErrorKind::Failed, "netlink: truncated error message", std::make_error_code(std::errc::bad_message));
                }
                const auto* err = static_cast<const nlmsgerr*>(mnl_nlmsg_get_payload(hdr));
                if (err->error == 0) return;
                throw system_error("netlink request", -err->error, {"", "", extack_text(hdr)});
            }
            if (hdr->nlmsg_type == NLMSG_DONE) return;
            if (hdr->nlmsg_type == NLMSG_NOOP) continue;
            on_message(message);
        }
    }
}

void NetlinkSocket::transact(NlRequest& req, const MessageHandler& on_message) { receive_until_ack(send(req), on_message); }

uint16_t decode_family_id(Bytes message) {
    static constexpr AttrPolicy kPolicy[] = {{CTRL_ATTR_FAMILY_ID, AttrType::U16}, {CTRL_ATTR_FAMILY_NAME, AttrType::String}};
    const auto attrs = parse_attrs<CTRL_ATTR_FAMILY_NAME>(genl_payload(message), kPolicy, "genetlink family");
    if (!attrs[CTRL_ATTR_FAMILY_ID]) {
        throw Error(ErrorKind::Failed, "decode genetlink family: no family id", std::make_error_code(std::errc::bad_message));
    }
    uint16_t id = 0;
    std::memcpy(&id, attr_payload(attrs[CTRL_ATTR_FAMILY_ID]).data(), sizeof id);
    return id;
}

uint16_t resolve_genl_family(NetlinkSocket& sock, std::string_view name) {
    auto req = NlRequest::genl(GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, NLM_F_ACK);
    req.put_strz(CTRL_ATTR_FAMILY_NAME, name);
    uint16_t id = 0;
    try {
        sock.transact(req, [&](Bytes message) { id = decode_family_id(message); });
    } catch (const Error& e) {
        if (e.code().value() == ENOENT) {
            throw Error(ErrorKind::Failed, "genetlink family \"" + std::string(name) + "\" is not in this kernel",
                        std::make_error_code(std::errc::operation_not_supported));
        }
        throw;
    }
    if (id == 0)
        throw Error(ErrorKind::Failed, "resolve genetlink family " + std::string(name) + ": no reply", std::make_error_code(std::errc::bad_message));
    return id;
}

}  // namespace nm::nl

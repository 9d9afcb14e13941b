#pragma once
// The one netlink socket owner (libmnl) and the one request builder. Open, bind, send, and the receive
// loop with extended-ack errors are written here once; an ethtool command needs a builder and a decoder.
#include <libmnl/libmnl.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ethtool_ctl/netlink_attrs.hpp"

namespace nm::nl {

class NlRequest;

/// A nested attribute being built. Close it when its contents are complete; if the scope unwinds first
/// (an exception), the destructor cancels the nest so the request never holds a half-written attribute.
class Nest {
public:
    Nest(NlRequest& req, nlattr* start) noexcept : req_(&req), start_(start) {}
    Nest(Nest&& other) noexcept : req_(other.req_), start_(std::exchange(other.start_, nullptr)) {}
    Nest(const Nest&) = delete;
    Nest& operator=(const Nest&) = delete;
    Nest& operator=(Nest&&) = delete;
    ~Nest();

    /// Ends the nest: its length now covers everything put since it was opened.
    void close() noexcept;

private:
    NlRequest* req_;
    nlattr* start_;
};

/// One netlink request message in its own buffer. Every put throws nm::Error (Failed) when the buffer is
/// full instead of silently truncating.
class NlRequest {
public:
    /// A generic netlink request: nlmsghdr (type = family id) plus genlmsghdr (cmd, version).
    static NlRequest genl(uint16_t family, uint8_t cmd, uint8_t version, uint16_t flags);
    /// A classic netlink request with a fixed header of `header_len` zeroed bytes (e.g. ifinfomsg).
    static NlRequest plain(uint16_t type, uint16_t flags, size_t header_len);

    nlmsghdr* header() noexcept { return reinterpret_cast<nlmsghdr*>(buf_.data()); }
    /// The fixed header after nlmsghdr (genlmsghdr, ifinfomsg, ...).
    void* extra_header() noexcept { return mnl_nlmsg_get_payload(header()); }

    /// Appends a u32 attribute.
    void put_u32(uint16_t type, uint32_t value);
    /// Appends a NUL-terminated string attribute.
    void put_strz(uint16_t type, std::string_view value);
    /// Appends a flag (an attribute without payload).
    void put_flag(uint16_t type);
    /// Appends `len` raw bytes.
    void put_binary(uint16_t type, const void* data, size_t len);
    /// Opens a nested attribute; see Nest.
    [[nodiscard]] Nest nest(uint16_t type);

    /// The message as it stands.
    Bytes bytes() noexcept { return Bytes(buf_.data(), header()->nlmsg_len); }

private:
    friend class Nest;
    NlRequest();
    std::vector<uint8_t> buf_;
};

/// Called for every reply message that is not an ack, error or end of dump.
using MessageHandler = std::function<void(Bytes message)>;

/// An open, bound netlink socket with extended acks on. Move-only; the factory connects or throws.
class NetlinkSocket {
public:
    /// Opens and binds a socket on `bus` (NETLINK_GENERIC, NETLINK_ROUTE) in the calling thread's
    /// namespace, with NETLINK_EXT_ACK and NETLINK_CAP_ACK on. Throws nm::Error.
    static NetlinkSocket open(int bus);

    /// Stamps a fresh sequence number and this socket's port on `req`, sends it, returns the sequence.
    uint32_t send(NlRequest& req);

    /// Receives until the kernel acks `seq` (or ends the dump), passing each data message to `on_message`.
    /// A negative ack throws nm::Error with the errno and the kernel's extack text in the context.
    void receive_until_ack(uint32_t seq, const MessageHandler& on_message);

    /// send() then receive_until_ack(); the request should carry NLM_F_ACK (or NLM_F_DUMP).
    void transact(NlRequest& req, const MessageHandler& on_message);

    /// Sees every message received before it is handled (used to capture replies as test fixtures).
    void set_tap(MessageHandler tap) { tap_ = std::move(tap); }

private:
    struct Closer {
        void operator()(mnl_socket* s) const noexcept { mnl_socket_close(s); }
    };
    explicit NetlinkSocket(std::unique_ptr<mnl_socket, Closer> sock);

    std::unique_ptr<mnl_socket, Closer> sock_;
    uint32_t port_id_ = 0;
    uint32_t next_seq_ = 1;
    MessageHandler tap_;
};

/// Resolves a generic netlink family's id by name (CTRL_CMD_GETFAMILY). When the kernel has no such
/// family, throws nm::Error (Failed) with code EOPNOTSUPP, so callers can fall back.
uint16_t resolve_genl_family(NetlinkSocket& sock, std::string_view name);

/// The family id in a CTRL_CMD_NEWFAMILY reply (pure decoder, for tests).
uint16_t decode_family_id(Bytes message);

}  // namespace nm::nl

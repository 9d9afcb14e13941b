#pragma once
// Small socket helpers for the engine: addresses, listening, connecting and whole-buffer I/O, every blocking
// step bounded by a deadline. Failures throw nm::Error naming the address.
#include <sys/socket.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "core/base/unique_fd.hpp"

namespace nm {

using Deadline = std::chrono::steady_clock::time_point;

/// A socket address (IPv4 or IPv6) by value.
struct SocketAddress {
    sockaddr_storage storage{};
    socklen_t len = 0;

    int family() const { return storage.ss_family; }
    const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
    sockaddr* get() { return reinterpret_cast<sockaddr*>(&storage); }
    /// Numeric host ("198.18.0.2", "2001:2::2"; IPv4-mapped IPv6 shown as IPv4).
    std::string host() const;
    uint16_t port() const;
    void set_port(uint16_t port);
};

/// The host part of `a` as 4 (IPv4, also for an IPv4-mapped IPv6 address) or 16 bytes (IPv6) in `out`;
/// false for another family.
bool host_bytes(const sockaddr_storage& a, bool& v6, std::array<uint8_t, 16>& out);

/// True when `a` and `b` name the same host (ports ignored; ::ffff:198.18.0.1 is 198.18.0.1).
bool same_host(const sockaddr_storage& a, const SocketAddress& b);

/// Resolves `host` (numeric or a name) for `port`. Throws nm::Error (Usage) naming the host.
SocketAddress resolve_address(const std::string& host, uint16_t port);

SocketAddress local_address(int fd);
SocketAddress peer_address(int fd);

/// A TCP listener on `bind` (empty: dual-stack [::]) and `port` (0: any). Throws nm::Error (Failed) with
/// the address and errno text, e.g. "listen on [::]:5301: Address already in use".
UniqueFd listen_tcp(const std::string& bind, uint16_t port);

/// Connects a TCP socket to `to` by `deadline` (from `bind` when not empty). `window` > 0 sets SO_SNDBUF
/// and SO_RCVBUF before connecting, so the window scale is negotiated for it; `prepare`, when given, is
/// called with the socket before it binds or connects (options the SYN must carry; it may throw). The
/// socket is returned non-blocking. Throws nm::Error (Failed): "connect to 198.18.0.2:5301: Connection refused".
UniqueFd connect_tcp(const SocketAddress& to, const std::string& bind, uint32_t window, Deadline deadline,
                     const std::function<void(int)>& prepare = {});

void set_nonblocking(int fd, bool on);
/// SO_SNDBUF and SO_RCVBUF to `bytes` (0: leave the kernel's autotuning alone).
void set_buffer_sizes(int fd, uint32_t bytes);

/// Waits until `fd` has `events` (POLLIN/POLLOUT) or `deadline`; false on timeout.
bool wait_fd(int fd, short events, Deadline deadline);

/// Sends all of `data` on a non-blocking socket by `deadline`; throws nm::Error (Failed) on error or timeout.
void send_all(int fd, const void* data, size_t size, Deadline deadline, const std::string& what);

/// Receives exactly `size` bytes by `deadline`; throws nm::Error (Failed) on EOF, error or timeout.
void recv_exact(int fd, void* data, size_t size, Deadline deadline, const std::string& what);

}  // namespace nm

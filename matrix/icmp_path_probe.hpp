#pragma once
#include <chrono>
#include <cstdint>
#include <string>

#include "core/base/unique_fd.hpp"
#include "matrix/path_probe.hpp"

namespace nm {

/// The real path probe: an ICMP echo request of exactly `mtu` bytes (IPv4 header included) with the
/// don't-fragment bit set (IP_PMTUDISC_PROBE: DF on, and the kernel's cached path MTU ignored, so the
/// probe tests the path and not our own cache), sent from a raw socket opened in the client's namespace,
/// and its echo awaited. Needs CAP_NET_RAW in that namespace.
class IcmpPathProbe final : public PathProbe {
public:
    /// Opens the socket inside `netns` ("" = the caller's namespace) for probes to `target_ipv4` (a
    /// dotted-quad address). Throws nm::Error (Usage) for a bad address, (Refused/Failed) when the socket
    /// cannot be opened.
    IcmpPathProbe(const std::string& netns, const std::string& target_ipv4);

    ProbeResult probe(uint32_t mtu, std::chrono::milliseconds timeout, std::stop_token stop) override;

private:
    UniqueFd fd_;
    std::string target_;
    uint32_t target_addr_ = 0;   // network byte order
    uint16_t id_ = 0;
    uint16_t seq_ = 0;
};

/// Checks, before a sweep changes anything, that `host` answers a small ping (from `netns`) and accepts a
/// TCP connection on `port` within `timeout` each. Throws nm::Error (Usage) saying which of the two failed.
void check_peer_reachable(const std::string& netns, const std::string& host, uint16_t port, std::chrono::milliseconds timeout);

}  // namespace nm

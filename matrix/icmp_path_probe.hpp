#pragma once
#include <netinet/in.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/unique_fd.hpp"
#include "matrix/path_probe.hpp"

namespace nm {

/// The real path probe: an ICMP (IPv4) or ICMPv6 (IPv6) echo request of exactly `mtu` bytes, IP header
/// included (20 bytes for IPv4, 40 for IPv6), sent from a raw socket opened in the client's namespace,
/// and its echo awaited. Fragmentation is forbidden and the kernel's cached path MTU ignored, so the probe
/// tests the path and not our own cache: IPv4 sets DF through IP_MTU_DISCOVER = IP_PMTUDISC_PROBE; IPv6
/// (where only the source may fragment) sets IPV6_DONTFRAG and IPV6_MTU_DISCOVER = IPV6_PMTUDISC_PROBE.
/// A "fragmentation needed" (ICMPv4) or "packet too big" (ICMPv6) answer about our probe fails it with
/// the next hop's MTU. Needs CAP_NET_RAW in that namespace.
class IcmpPathProbe final : public PathProbe {
public:
    /// Opens the socket inside `netns` ("" = the caller's namespace) for probes to `target`, a numeric
    /// IPv4 ("198.18.0.2") or IPv6 ("2001:2::2") address. Throws nm::Error (Usage) for anything else,
    /// (Refused/Failed) when the socket cannot be opened.
    IcmpPathProbe(const std::string& netns, const std::string& target);

    ProbeResult probe(uint32_t mtu, std::chrono::milliseconds timeout, std::stop_token stop) override;

    /// AF_INET or AF_INET6: the family of the target.
    int family() const { return family_; }

private:
    std::vector<uint8_t> echo_request(uint32_t mtu, uint16_t seq) const;
    /// What a received packet says about probe `seq` of `mtu` bytes: nothing (not ours), or the result.
    std::optional<ProbeResult> judge(const uint8_t* data, size_t n, const sockaddr_storage& from, uint32_t mtu, uint16_t seq,
                                     const std::string& what) const;

    UniqueFd fd_;
    std::string target_;
    int family_ = AF_INET;
    sockaddr_storage to_{};
    socklen_t to_len_ = 0;
    uint16_t id_ = 0;
    uint16_t seq_ = 0;
};

/// Checks, before a sweep changes anything, that `host` (a numeric IPv4 or IPv6 address) answers a small
/// ping (from `netns`) and, with `connect`, accepts a TCP connection on `port` within `timeout` each.
/// Throws nm::Error (Usage) saying which of the two failed.
void check_peer_reachable(const std::string& netns, const std::string& host, uint16_t port, std::chrono::milliseconds timeout, bool connect = true);

}  // namespace nm

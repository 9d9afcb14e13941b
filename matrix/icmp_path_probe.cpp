#include "matrix/icmp_path_probe.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/icmp.h>
#include <netdb.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

#include "core/base/error.hpp"
#include "ethtool_ctl/netns.hpp"

namespace nm {
namespace {

constexpr size_t kIpv4Header = 20;
constexpr size_t kIpv6Header = 40;
constexpr size_t kIcmpHeader = 8;  // the same for ICMPv4 and ICMPv6 echo

uint16_t checksum(const uint8_t* data, size_t len) {
    uint32_t sum = 0;
    for (size_t i = 0; i + 1 < len; i += 2) sum += static_cast<uint32_t>(data[i] << 8 | data[i + 1]);
    if (len % 2) sum += static_cast<uint32_t>(data[len - 1] << 8);
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    return static_cast<uint16_t>(~sum);
}

uint16_t be16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
uint32_t be32(const uint8_t* p) {
    return static_cast<uint32_t>(p[0]) << 24 | static_cast<uint32_t>(p[1]) << 16 | static_cast<uint32_t>(p[2]) << 8 | p[3];
}

// A numeric IPv4 or IPv6 address (with a %scope for link-local IPv6), never a name: names are resolved
// once, where the user gave them (the sweep request), so every part of a sweep talks to the same address.
sockaddr_storage parse_numeric(const std::string& text, socklen_t& len) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_flags = AI_NUMERICHOST;
    addrinfo* res = nullptr;
    if (text.empty() || ::getaddrinfo(text.c_str(), nullptr, &hints, &res) != 0 || res == nullptr) {
        throw usage_error("path probe target: expected an IPv4 or IPv6 address like 198.18.0.2 or 2001:2::2, got \"" + text + "\"");
    }
    sockaddr_storage out{};
    std::memcpy(&out, res->ai_addr, res->ai_addrlen);
    len = res->ai_addrlen;
    ::freeaddrinfo(res);
    return out;
}

bool same_host(const sockaddr_storage& a, const sockaddr_storage& b) {
    if (a.ss_family != b.ss_family) return false;
    if (a.ss_family == AF_INET) {
        return reinterpret_cast<const sockaddr_in&>(a).sin_addr.s_addr == reinterpret_cast<const sockaddr_in&>(b).sin_addr.s_addr;
    }
    return std::memcmp(&reinterpret_cast<const sockaddr_in6&>(a).sin6_addr, &reinterpret_cast<const sockaddr_in6&>(b).sin6_addr, sizeof(in6_addr)) ==
           0;
}

void set_option(int fd, int level, int name, const void* value, socklen_t len, const char* what) {
    if (::setsockopt(fd, level, name, value, len) != 0) throw system_error(std::string("set ") + what + " on the probe socket", errno);
}

}  // namespace

IcmpPathProbe::IcmpPathProbe(const std::string& netns, const std::string& target) : target_(target) {
    to_ = parse_numeric(target, to_len_);
    family_ = to_.ss_family;
    const bool v6 = family_ == AF_INET6;
    {
        NetnsScope scope(netns);
        const int protocol = v6 ? static_cast<int>(IPPROTO_ICMPV6) : static_cast<int>(IPPROTO_ICMP);
        fd_ = UniqueFd(::socket(family_, SOCK_RAW | SOCK_CLOEXEC, protocol));
    }
    if (!fd_) throw system_error(std::string("open raw ") + (v6 ? "ICMPv6" : "ICMP") + " socket for the path MTU probe", errno);
    if (v6) {
        // IPv6 routers never fragment; IPV6_DONTFRAG stops this host from fragmenting the probe, and
        // PMTUDISC_PROBE sizes it against the device MTU, not a path MTU the kernel cached earlier.
        const int pmtu = IPV6_PMTUDISC_PROBE;
        set_option(fd_.get(), IPPROTO_IPV6, IPV6_MTU_DISCOVER, &pmtu, sizeof pmtu, "IPV6_MTU_DISCOVER");
        const int one = 1;
        set_option(fd_.get(), IPPROTO_IPV6, IPV6_DONTFRAG, &one, sizeof one, "IPV6_DONTFRAG");
        // Only echo replies and "packet too big" reach us. The kernel fills in ICMPv6 checksums itself.
        icmp6_filter filter{};
        ICMP6_FILTER_SETBLOCKALL(&filter);
        ICMP6_FILTER_SETPASS(ICMP6_ECHO_REPLY, &filter);
        ICMP6_FILTER_SETPASS(ICMP6_PACKET_TOO_BIG, &filter);
        set_option(fd_.get(), IPPROTO_ICMPV6, ICMP6_FILTER, &filter, sizeof filter, "ICMP6_FILTER");
    } else {
        // DF on every probe, and the route's cached PMTU ignored: a probe must cross the wire at full size.
        const int pmtu = IP_PMTUDISC_PROBE;
        set_option(fd_.get(), IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof pmtu, "IP_MTU_DISCOVER");
        // Only echo replies and "destination unreachable" (fragmentation needed) reach us.
        icmp_filter filter{~((1U << ICMP_ECHOREPLY) | (1U << ICMP_DEST_UNREACH))};
        set_option(fd_.get(), SOL_RAW, ICMP_FILTER, &filter, sizeof filter, "ICMP_FILTER");
    }
    std::random_device rd;
    id_ = static_cast<uint16_t>(rd());
}

std::vector<uint8_t> IcmpPathProbe::echo_request(uint32_t mtu, uint16_t seq) const {
    const bool v6 = family_ == AF_INET6;
    std::vector<uint8_t> packet(mtu - (v6 ? kIpv6Header : kIpv4Header));
    packet[0] = v6 ? ICMP6_ECHO_REQUEST : ICMP_ECHO;
    packet[4] = static_cast<uint8_t>(id_ >> 8);
    packet[5] = static_cast<uint8_t>(id_);
    packet[6] = static_cast<uint8_t>(seq >> 8);
    packet[7] = static_cast<uint8_t>(seq);
    for (size_t i = kIcmpHeader; i < packet.size(); ++i) packet[i] = static_cast<uint8_t>(i);
    if (!v6) {  // ICMPv6's checksum covers a pseudo-header the kernel knows; it computes it on a raw socket
        const uint16_t sum = checksum(packet.data(), packet.size());
        packet[2] = static_cast<uint8_t>(sum >> 8);
        packet[3] = static_cast<uint8_t>(sum);
    }
    return packet;
}

std::optional<ProbeResult> IcmpPathProbe::judge(const uint8_t* data, size_t n, const sockaddr_storage& from, uint32_t mtu, uint16_t seq,
                                                const std::string& what) const {
    const bool v6 = family_ == AF_INET6;
    // A raw IPv4 socket hands over the IP header too; a raw ICMPv6 socket only the ICMPv6 message.
    const size_t ip = v6 ? 0 : static_cast<size_t>(data[0] & 0x0f) * 4;
    if (n < ip + kIcmpHeader) return std::nullopt;
    const uint8_t* icmp = data + ip;
    const uint8_t echo_reply = v6 ? ICMP6_ECHO_REPLY : ICMP_ECHOREPLY;
    if (icmp[0] == echo_reply && same_host(from, to_) && be16(icmp + 4) == id_ && be16(icmp + 6) == seq) {
        const size_t echoed = n + (v6 ? kIpv6Header : 0);
        if (echoed < mtu) return ProbeResult{false, what + ": the echo came back truncated (" + std::to_string(echoed) + " bytes)"};
        return ProbeResult{true, what + ": echoed"};
    }
    // The error carries the start of our datagram: its IP header, then our echo request's header.
    const uint8_t* inner = icmp + kIcmpHeader;
    const size_t inner_len = n - ip - kIcmpHeader;
    if (v6 && icmp[0] == ICMP6_PACKET_TOO_BIG) {
        if (inner_len >= kIpv6Header + kIcmpHeader && inner[6] == IPPROTO_ICMPV6 && be16(inner + kIpv6Header + 4) == id_) {
            return ProbeResult{false, what + ": packet too big, next-hop MTU " + std::to_string(be32(icmp + 4))};
        }
    }
    if (!v6 && icmp[0] == ICMP_DEST_UNREACH && icmp[1] == ICMP_FRAG_NEEDED && inner_len >= kIpv4Header + kIcmpHeader) {
        const size_t inner_ihl = static_cast<size_t>(inner[0] & 0x0f) * 4;
        if (inner_len >= inner_ihl + kIcmpHeader && be16(inner + inner_ihl + 4) == id_) {
            return ProbeResult{false, what + ": fragmentation needed, next-hop MTU " + std::to_string(be16(icmp + 6))};
        }
    }
    return std::nullopt;
}

ProbeResult IcmpPathProbe::probe(uint32_t mtu, std::chrono::milliseconds timeout, std::stop_token stop) {
    const bool v6 = family_ == AF_INET6;
    const std::string what = std::to_string(mtu) + "-byte " + (v6 ? "ICMPv6 echo, don't-fragment," : "ICMP echo with DF set") + " to " + target_;
    if (mtu < (v6 ? kIpv6Header : kIpv4Header) + kIcmpHeader) throw usage_error("path probe: MTU " + std::to_string(mtu) + " is too small");
    const uint16_t seq = ++seq_;
    const std::vector<uint8_t> packet = echo_request(mtu, seq);
    const auto send = [&]() -> bool {
        if (::sendto(fd_.get(), packet.data(), packet.size(), 0, reinterpret_cast<const sockaddr*>(&to_), to_len_) < 0) {
            if (errno == EMSGSIZE) return false;
            // A packet dropped on its way out: IPv6 raw sockets report the device's NET_XMIT_DROP (a veth
            // whose peer has a smaller MTU drops the frame in the sending call) where IPv4 stays silent.
            // It is a probe lost on the path, as one dropped one hop later would be: wait and resend.
            if (errno == ENOBUFS) return true;
            throw system_error("send the path MTU probe to " + target_, errno);
        }
        return true;
    };
    if (!send()) return {false, what + ": larger than the sending interface's MTU"};

    // The same probe is sent again every 250 ms until the deadline: one lost packet (a neighbour entry
    // still resolving, a link just up) must not read as a path that drops this size.
    constexpr auto kResend = std::chrono::milliseconds(250);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    auto next_send = std::chrono::steady_clock::now() + kResend;
    std::vector<uint8_t> buf(65536);
    while (!stop.stop_requested()) {
        const auto now = std::chrono::steady_clock::now();
        if (now >= deadline) break;
        if (now >= next_send) {
            send();
            next_send = now + kResend;
        }
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(std::min(deadline, next_send) - now);
        if (left.count() <= 0) continue;
        pollfd p{fd_.get(), POLLIN, 0};
        // Short slices so a stop request is seen quickly.
        const int ready = ::poll(&p, 1, static_cast<int>(std::min<long>(left.count(), 100)) + 1);
        if (ready < 0 && errno != EINTR) throw system_error("wait for the path MTU probe's echo", errno);
        if (ready <= 0) continue;
        sockaddr_storage from{};
        socklen_t from_len = sizeof from;
        const ssize_t n = ::recvfrom(fd_.get(), buf.data(), buf.size(), 0, reinterpret_cast<sockaddr*>(&from), &from_len);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            throw system_error("receive the path MTU probe's echo", errno);
        }
        if (auto verdict = judge(buf.data(), static_cast<size_t>(n), from, mtu, seq, what)) return *verdict;
    }
    if (stop.stop_requested()) return {false, what + ": stopped"};
    return {false, what + ": no echo within " + std::to_string(timeout.count()) + " ms (the path drops frames of this size)"};
}

void check_peer_reachable(const std::string& netns, const std::string& host, uint16_t port, std::chrono::milliseconds timeout, bool connect) {
    IcmpPathProbe ping(netns, host);
    // 84 bytes: the size of a default `ping` over IPv4 (104 over IPv6), which any path carries.
    if (!ping.probe(ping.family() == AF_INET6 ? 104 : 84, timeout, {}).passed) {
        throw usage_error("peer " + host + " is unreachable: no answer to ping within " + std::to_string(timeout.count()) + " ms");
    }
    if (!connect) return;
    socklen_t to_len = 0;
    sockaddr_storage to = parse_numeric(host, to_len);
    if (to.ss_family == AF_INET6) reinterpret_cast<sockaddr_in6&>(to).sin6_port = htons(port);
    else reinterpret_cast<sockaddr_in&>(to).sin_port = htons(port);
    UniqueFd fd;
    {
        NetnsScope scope(netns);
        fd = UniqueFd(::socket(to.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    }
    if (!fd) throw system_error("open a TCP socket to check the peer", errno);
    const std::string where = "peer " + host + " port " + std::to_string(port);
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&to), to_len) != 0 && errno != EINPROGRESS) {
        throw usage_error(where + ": cannot connect (" + std::string(std::strerror(errno)) + "); is `nicmatrix serve` running there?");
    }
    pollfd p{fd.get(), POLLOUT, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(timeout.count()));
    int err = 0;
    socklen_t len = sizeof err;
    if (ready <= 0 || ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
        throw usage_error(where + ": no traffic server answers" + (err ? " (" + std::string(std::strerror(err)) + ")" : "") +
                          "; is `nicmatrix serve` running there?");
    }
}

}  // namespace nm

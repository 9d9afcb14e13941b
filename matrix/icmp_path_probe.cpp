#include "matrix/icmp_path_probe.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/icmp.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <vector>

#include "core/base/error.hpp"
#include "ethtool_ctl/netns.hpp"

namespace nm {
namespace {

constexpr size_t kIpHeader = 20;
constexpr size_t kIcmpHeader = 8;

uint16_t checksum(const uint8_t* data, size_t len) {
    uint32_t sum = 0;
    for (size_t i = 0; i + 1 < len; i += 2) sum += static_cast<uint32_t>(data[i] << 8 | data[i + 1]);
    if (len % 2) sum += static_cast<uint32_t>(data[len - 1] << 8);
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    return static_cast<uint16_t>(~sum);
}

uint32_t parse_ipv4(const std::string& text) {
    in_addr a{};
    if (::inet_pton(AF_INET, text.c_str(), &a) != 1) {
        throw usage_error("path probe target: expected an IPv4 address like 198.18.0.2, got \"" + text + "\"");
    }
    return a.s_addr;
}

}  // namespace

IcmpPathProbe::IcmpPathProbe(const std::string& netns, const std::string& target_ipv4)
    : target_(target_ipv4), target_addr_(parse_ipv4(target_ipv4)) {
    {
        NetnsScope scope(netns);
        fd_ = UniqueFd(::socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP));
    }
    if (!fd_) throw system_error("open raw ICMP socket for the path MTU probe", errno);
    // DF on every probe, and the route's cached PMTU ignored: a probe must cross the wire at full size.
    const int pmtu = IP_PMTUDISC_PROBE;
    if (::setsockopt(fd_.get(), IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof pmtu) != 0) {
        throw system_error("set IP_MTU_DISCOVER on the probe socket", errno);
    }
    // Only echo replies and "destination unreachable" (fragmentation needed) reach us.
    icmp_filter filter{~((1U << ICMP_ECHOREPLY) | (1U << ICMP_DEST_UNREACH))};
    if (::setsockopt(fd_.get(), SOL_RAW, ICMP_FILTER, &filter, sizeof filter) != 0) {
        throw system_error("set ICMP_FILTER on the probe socket", errno);
    }
    std::random_device rd;
    id_ = static_cast<uint16_t>(rd());
}

ProbeResult IcmpPathProbe::probe(uint32_t mtu, std::chrono::milliseconds timeout, std::stop_token stop) {
    const std::string what = std::to_string(mtu) + "-byte ICMP echo with DF set to " + target_;
    if (mtu < kIpHeader + kIcmpHeader) throw usage_error("path probe: MTU " + std::to_string(mtu) + " is too small");
    const uint16_t seq = ++seq_;
    std::vector<uint8_t> packet(mtu - kIpHeader);
    packet[0] = ICMP_ECHO;
    packet[4] = static_cast<uint8_t>(id_ >> 8);
    packet[5] = static_cast<uint8_t>(id_);
    packet[6] = static_cast<uint8_t>(seq >> 8);
    packet[7] = static_cast<uint8_t>(seq);
    for (size_t i = kIcmpHeader; i < packet.size(); ++i) packet[i] = static_cast<uint8_t>(i);
    const uint16_t sum = checksum(packet.data(), packet.size());
    packet[2] = static_cast<uint8_t>(sum >> 8);
    packet[3] = static_cast<uint8_t>(sum);

    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_addr.s_addr = target_addr_;
    const auto send = [&]() -> bool {
        if (::sendto(fd_.get(), packet.data(), packet.size(), 0, reinterpret_cast<const sockaddr*>(&to), sizeof to) < 0) {
            if (errno == EMSGSIZE) return false;
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
        sockaddr_in from{};
        socklen_t from_len = sizeof from;
        const ssize_t n = ::recvfrom(fd_.get(), buf.data(), buf.size(), 0, reinterpret_cast<sockaddr*>(&from), &from_len);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            throw system_error("receive the path MTU probe's echo", errno);
        }
        const size_t ihl = static_cast<size_t>(buf[0] & 0x0f) * 4;
        if (static_cast<size_t>(n) < ihl + kIcmpHeader) continue;
        const uint8_t* icmp = buf.data() + ihl;
        if (icmp[0] == ICMP_ECHOREPLY && from.sin_addr.s_addr == target_addr_ && (icmp[4] << 8 | icmp[5]) == id_ &&
            (icmp[6] << 8 | icmp[7]) == seq) {
            const size_t echoed = static_cast<size_t>(n);
            if (echoed < mtu) return {false, what + ": the echo came back truncated (" + std::to_string(echoed) + " bytes)"};
            return {true, what + ": echoed"};
        }
        if (icmp[0] == ICMP_DEST_UNREACH && icmp[1] == ICMP_FRAG_NEEDED) {
            // The original datagram's header follows: check it is ours.
            const size_t inner = ihl + kIcmpHeader;
            if (static_cast<size_t>(n) >= inner + kIpHeader + kIcmpHeader) {
                const size_t inner_ihl = static_cast<size_t>(buf[inner] & 0x0f) * 4;
                const uint8_t* orig = buf.data() + inner + inner_ihl;
                if (static_cast<size_t>(n) >= inner + inner_ihl + kIcmpHeader && (orig[4] << 8 | orig[5]) == id_) {
                    const int next_hop = icmp[6] << 8 | icmp[7];
                    return {false, what + ": fragmentation needed, next-hop MTU " + std::to_string(next_hop)};
                }
            }
        }
    }
    if (stop.stop_requested()) return {false, what + ": stopped"};
    return {false, what + ": no echo within " + std::to_string(timeout.count()) + " ms (the path drops frames of this size)"};
}

void check_peer_reachable(const std::string& netns, const std::string& host, uint16_t port, std::chrono::milliseconds timeout) {
    IcmpPathProbe ping(netns, host);
    // 84 bytes: the size of a default `ping`, which any path carries.
    if (!ping.probe(84, timeout, {}).passed) {
        throw usage_error("peer " + host + " is unreachable: no answer to ping within " + std::to_string(timeout.count()) + " ms");
    }
    UniqueFd fd;
    {
        NetnsScope scope(netns);
        fd = UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    }
    if (!fd) throw system_error("open a TCP socket to check the peer", errno);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port);
    to.sin_addr.s_addr = parse_ipv4(host);
    const std::string where = "peer " + host + " port " + std::to_string(port);
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0 && errno != EINPROGRESS) {
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

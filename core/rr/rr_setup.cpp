#include "core/rr/rr_setup.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <string>

#include "core/base/error.hpp"

namespace nm {

void resolve_rr(TestSpec& s) {
    if (s.pattern == TrafficPattern::Stream) return;
    const bool udp = s.protocol == Protocol::Udp;
    const std::string what = s.pattern == TrafficPattern::Crr ? "--crr" : "--rr";
    if (s.pattern == TrafficPattern::Crr && udp) throw usage_error("--crr: a connection per transaction is TCP; drop -u (or use --rr)");
    if (s.direction != Direction::Forward) throw usage_error(what + ": the client starts every transaction; drop -R/--bidir");
    if (s.bytes > 0) throw usage_error(what + ": runs for a duration (-t); drop -n");
    if (s.rate_bps > 0 || s.rate_pps > 0)
        throw usage_error(what + ": runs as fast as the answers come (--rr-burst sets how many are in flight); drop -b/--pps");
    if (s.udp_gso || s.udp_gro) throw usage_error(what + ": --gso and --gro are for UDP streams");
    if (!s.payload_mix.empty()) throw usage_error(what + ": a payload mix is for UDP streams");
    const uint32_t max = udp ? kMaxUdpRrMessage : kMaxTcpRrMessage;
    for (const auto& [size, name] : {std::pair{s.request_size, "request"}, std::pair{s.response_size, "response"}}) {
        if (size < 1 || size > max) {
            throw usage_error("rr-size: " + std::string(name) + " of " + std::to_string(size) + " bytes; must be 1.." + std::to_string(max) +
                              (udp ? " (one UDP datagram)" : ""));
        }
    }
    if (s.rr_burst < 1 || s.rr_burst > kMaxRrBurst) {
        throw usage_error("rr-burst: " + std::to_string(s.rr_burst) + "; must be 1.." + std::to_string(kMaxRrBurst));
    }
    if (s.pattern == TrafficPattern::Crr && s.rr_burst != 1) throw usage_error("rr-burst: --crr has one transaction per connection; drop --rr-burst");
    if (s.streams == 0) s.streams = 1;
}

std::vector<std::vector<DataStream>> make_crr_listeners(SocketAddress local, uint32_t count, uint16_t& port) {
    std::vector<std::vector<DataStream>> groups;
    local.set_port(0);
    for (uint32_t i = 0; i < std::max<uint32_t>(count, 1); ++i) {
        UniqueFd fd(::socket(local.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
        if (!fd) throw system_error("socket (CRR listener)", errno);
        const int one = 1;
        ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
        if (::bind(fd.get(), local.get(), local.len) != 0) throw system_error("bind the CRR listener", errno);
        // A backlog for every connection a burst of flows may have in its handshake at once.
        if (::listen(fd.get(), 4096) != 0) throw system_error("listen (CRR)", errno);
        if (i == 0) local = local_address(fd.get());
        std::vector<DataStream> g;
        g.push_back(DataStream{std::move(fd), i});
        groups.push_back(std::move(g));
    }
    port = local.port();
    return groups;
}

}  // namespace nm

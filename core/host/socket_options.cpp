#include "core/host/socket_options.hpp"

#include <linux/errqueue.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <sstream>

#include "core/base/error.hpp"
#include "core/base/unique_fd.hpp"
#include "core/host/proc_stats.hpp"

#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY 60
#endif

namespace nm {
namespace {

constexpr const char* kAvailablePath = "/proc/sys/net/ipv4/tcp_available_congestion_control";

int family_of(int fd) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return AF_UNSPEC;
    return ss.ss_family;
}

std::string available_text() {
    try {
        const auto names = parse_congestion_list(read_proc_file(kAvailablePath));
        std::string out;
        for (const auto& n : names) out += (out.empty() ? "" : " ") + n;
        return out.empty() ? "(none listed)" : out;
    } catch (const Error&) {
        return "(" + std::string(kAvailablePath) + " cannot be read)";
    }
}

[[noreturn]] void congestion_unavailable(const std::string& name) {
    throw usage_error("congestion control (-C) \"" + name + "\": not available; the kernel offers: " + available_text() + " (" + kAvailablePath +
                      ")");
}

void set_congestion(int fd, const std::string& name) {
    if (::setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name.data(), static_cast<socklen_t>(name.size())) == 0) return;
    if (errno == ENOENT || errno == EPERM) congestion_unavailable(name);
    throw system_error("set TCP_CONGESTION " + name, errno);
}

void set_int(int fd, int level, int option, int value, const char* what) {
    if (::setsockopt(fd, level, option, &value, sizeof value) != 0) throw system_error(std::string("set ") + what, errno);
}

// IPv6 sockets carry IPV6_TCLASS; a dual-stack socket talking to an IPv4-mapped peer sends IPv4, whose TOS
// comes from IP_TOS, so both are set there (IP_TOS on an AF_INET6 socket is accepted for that case).
void set_tos(int fd, int tos) {
    if (family_of(fd) == AF_INET6) {
        set_int(fd, IPPROTO_IPV6, IPV6_TCLASS, tos, "IPV6_TCLASS (--dscp)");
        ::setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof tos);
    } else {
        set_int(fd, IPPROTO_IP, IP_TOS, tos, "IP_TOS (--dscp)");
    }
}

void set_bind_dev(int fd, const std::string& dev) {
    if (::setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, dev.c_str(), static_cast<socklen_t>(dev.size() + 1)) == 0) return;
    if (errno == ENODEV) throw usage_error("bind-dev: no device \"" + dev + "\" in this network namespace");
    throw system_error("set SO_BINDTODEVICE " + dev, errno);
}

bool v4_mapped_peer(int fd) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0 || ss.ss_family != AF_INET6) return false;
    return IN6_IS_ADDR_V4MAPPED(&reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_addr);
}

}  // namespace

void validate_socket_options(const TestSpec& spec) {
    const SocketOptions& o = spec.socket;
    const bool tcp = spec.protocol == Protocol::Tcp;
    if (o.mss != 0 && (o.mss < 88 || o.mss > 65495)) {
        throw usage_error("mss (-M): " + std::to_string(o.mss) + " bytes; must be 88..65495 (the kernel's TCP_MAXSEG range)");
    }
    if (o.dscp < -1 || o.dscp > 63) throw usage_error("dscp: " + std::to_string(o.dscp) + "; must be 0..63");
    if (!tcp) {
        if (!o.congestion.empty()) throw usage_error("congestion control (-C): a TCP option; drop -u");
        if (o.nodelay) throw usage_error("no delay (-N): a TCP option; drop -u");
        if (o.mss != 0) throw usage_error("mss (-M): a TCP option; drop -u");
        if (o.zerocopy) throw usage_error("zerocopy (-Z): MSG_ZEROCOPY is used on TCP senders here; drop -u");
        if (o.skip_rx_copy) throw usage_error("skip-rx-copy: reads with MSG_TRUNC are for TCP (UDP needs the sequence header); drop -u");
    }
    if (o.rx_spin_us > kMaxRxSpinUs) {
        throw usage_error("rx-spin: " + std::to_string(o.rx_spin_us) + " us; must be 0.." + std::to_string(kMaxRxSpinUs) +
                          " (longer than that a receiver looks at its clock anyway)");
    }
    if (o.rx_spin_us != 0 && spec.pattern != TrafficPattern::Stream) {
        throw usage_error("rx-spin: for stream receivers; a request/response flow already waits for its own answer");
    }
    if (o.zerocopy && spec.pattern != TrafficPattern::Stream) {
        throw usage_error("zerocopy (-Z): for bulk TCP streams; request/response messages are copied");
    }
    for (const char c : o.congestion) {
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') {
            throw usage_error("congestion control (-C): \"" + o.congestion + "\" is not a congestion control name");
        }
    }
    if (o.congestion.size() >= 16) throw usage_error("congestion control (-C): \"" + o.congestion + "\": names are at most 15 characters");
    if (o.bind_dev.size() >= IFNAMSIZ) throw usage_error("bind-dev: \"" + o.bind_dev + "\": interface names are at most 15 characters");
}

std::vector<std::string> parse_congestion_list(std::string_view text) {
    std::vector<std::string> out;
    std::istringstream in{std::string(text)};
    std::string name;
    while (in >> name) out.push_back(name);
    return out;
}

void check_congestion(const std::string& name) {
    if (name.empty()) return;
    // Only what the kernel has loaded: setting a name it has not would load a module (tcp_NAME) for
    // whoever asks, a client of the server among them. The list is read, never probed by setting it.
    std::string text;
    try {
        text = read_proc_file(kAvailablePath);
    } catch (const Error& e) {
        throw usage_error("congestion control (-C) \"" + name + "\": cannot read the kernel's list (" + e.what() + ")");
    }
    const auto names = parse_congestion_list(text);
    if (std::find(names.begin(), names.end(), name) != names.end()) return;
    throw usage_error("congestion control (-C) \"" + name + "\": not available; the kernel offers: " + available_text() + " (" + kAvailablePath +
                      "; nicmatrix loads no module: `modprobe tcp_" + name + "` as root first, if the kernel has it)");
}

void apply_tcp_options(int fd, const SocketOptions& o, SocketRole role) {
    if (role.sends && !o.congestion.empty()) set_congestion(fd, o.congestion);
    if (role.sends && o.nodelay) set_int(fd, IPPROTO_TCP, TCP_NODELAY, 1, "TCP_NODELAY (-N)");
    if (role.client && o.mss != 0) set_int(fd, IPPROTO_TCP, TCP_MAXSEG, static_cast<int>(o.mss), "TCP_MAXSEG (-M)");
    if (o.dscp >= 0) set_tos(fd, o.dscp << 2);
    if (role.client && !o.bind_dev.empty()) set_bind_dev(fd, o.bind_dev);
}

void apply_udp_options(int fd, const SocketOptions& o, bool client) {
    if (o.dscp >= 0) set_tos(fd, o.dscp << 2);
    if (client && !o.bind_dev.empty()) set_bind_dev(fd, o.bind_dev);
}

SocketKnobs read_socket_knobs(int fd, bool tcp) {
    SocketKnobs k;
    if (tcp) {
        char cc[16] = {};
        socklen_t len = sizeof cc;
        if (::getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, &len) == 0) k.congestion.assign(cc, strnlen(cc, len));
        int v = 0;
        len = sizeof v;
        if (::getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, &len) == 0) k.nodelay = v != 0;
        k.mss = tcp_mss(fd);
    }
    int tos = 0;
    socklen_t len = sizeof tos;
    const bool v6 = family_of(fd) == AF_INET6 && !v4_mapped_peer(fd);
    if (::getsockopt(fd, v6 ? IPPROTO_IPV6 : IPPROTO_IP, v6 ? IPV6_TCLASS : IP_TOS, &tos, &len) == 0) k.tos = tos;
    char dev[IFNAMSIZ] = {};
    len = sizeof dev;
    if (::getsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, dev, &len) == 0) k.bind_dev.assign(dev, strnlen(dev, len));
    return k;
}

uint32_t tcp_mss(int fd) {
    int v = 0;
    socklen_t len = sizeof v;
    return ::getsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &v, &len) == 0 && v > 0 ? static_cast<uint32_t>(v) : 0;
}

bool enable_zerocopy(int fd) {
    const int one = 1;
    return ::setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof one) == 0;
}

// Each notification is a sock_extended_err with origin SO_EE_ORIGIN_ZEROCOPY covering the sends numbered
// ee_info..ee_data (the kernel merges consecutive ones); ee_code SO_EE_CODE_ZEROCOPY_COPIED says the
// kernel copied the data after all (a local receiver, a device without scatter-gather).
uint64_t reap_zerocopy(int fd, ZeroCopyStats& stats) {
    uint64_t completed = 0;
    for (;;) {
        alignas(cmsghdr) unsigned char control[128];
        msghdr msg{};
        msg.msg_control = control;
        msg.msg_controllen = sizeof control;
        if (::recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) break;  // EAGAIN: the queue is empty
        for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
            const bool ip = (c->cmsg_level == SOL_IP && c->cmsg_type == IP_RECVERR) || (c->cmsg_level == SOL_IPV6 && c->cmsg_type == IPV6_RECVERR);
            if (!ip) continue;
            sock_extended_err err{};
            std::memcpy(&err, CMSG_DATA(c), sizeof err);
            if (err.ee_origin != SO_EE_ORIGIN_ZEROCOPY || err.ee_errno != 0) continue;
            const uint64_t n = static_cast<uint64_t>(err.ee_data - err.ee_info) + 1;
            completed += n;
            stats.completions += n;
            if (err.ee_code & SO_EE_CODE_ZEROCOPY_COPIED) stats.copied += n;
        }
    }
    return completed;
}

}  // namespace nm

#include "core/device/sysctl_allow_list.hpp"

namespace nm {

namespace {

constexpr SysctlEntry kList[] = {
    {"net.ipv4.tcp_congestion_control", true, "TCP congestion control (reno, cubic, bbr, ...)"},
    {"net.ipv4.tcp_rmem", true, "TCP receive buffer min default max, bytes"},
    {"net.ipv4.tcp_wmem", true, "TCP send buffer min default max, bytes"},
    {"net.ipv4.tcp_window_scaling", true, "TCP window scaling (RFC 7323), 0/1"},
    {"net.ipv4.tcp_timestamps", true, "TCP timestamps, 0/1/2"},
    {"net.ipv4.tcp_sack", true, "TCP selective acknowledgements, 0/1"},
    {"net.ipv4.tcp_ecn", true, "TCP ECN, 0/1/2"},
    {"net.ipv4.tcp_mtu_probing", true, "TCP packetization-layer path MTU discovery, 0/1/2"},
    {"net.ipv4.tcp_no_metrics_save", true, "do not cache TCP metrics of closed connections, 0/1"},
    {"net.ipv4.tcp_slow_start_after_idle", true, "TCP slow start after idle, 0/1"},
    {"net.ipv4.tcp_notsent_lowat", true, "TCP unsent bytes before the socket is writable"},
    {"net.ipv4.tcp_autocorking", true, "TCP autocorking, 0/1"},
    {"net.ipv4.tcp_limit_output_bytes", true, "TCP small queues: bytes per socket in qdisc/device"},
    {"net.ipv4.tcp_adv_win_scale", true, "TCP buffer overhead share"},
    {"net.ipv4.tcp_moderate_rcvbuf", true, "TCP receive buffer auto-tuning, 0/1"},
    {"net.ipv4.udp_rmem_min", true, "UDP minimal receive buffer, bytes"},
    {"net.ipv4.udp_wmem_min", true, "UDP minimal send buffer, bytes"},
    {"net.core.rmem_max", true, "socket receive buffer limit (SO_RCVBUF), bytes (per namespace on 5.x+ kernels)"},
    {"net.core.wmem_max", true, "socket send buffer limit (SO_SNDBUF), bytes"},
    {"net.core.rmem_default", true, "socket receive buffer default, bytes"},
    {"net.core.wmem_default", true, "socket send buffer default, bytes"},
    {"net.core.optmem_max", true, "socket ancillary buffer limit, bytes"},
    {"net.core.busy_poll", false, "busy polling for poll/select, microseconds (host-wide)"},
    {"net.core.busy_read", false, "busy polling for reads, microseconds (host-wide)"},
    {"net.core.netdev_budget", false, "packets per NAPI softirq round (host-wide)"},
    {"net.core.netdev_budget_usecs", false, "microseconds per NAPI softirq round (host-wide)"},
    {"net.core.netdev_max_backlog", false, "per-CPU input queue length (host-wide)"},
    {"net.core.dev_weight", false, "packets per NAPI poll of the backlog (host-wide)"},
};

}  // namespace

std::span<const SysctlEntry> sysctl_allow_list() { return kList; }

const SysctlEntry* find_sysctl(std::string_view name) {
    for (const auto& e : sysctl_allow_list()) {
        if (name == e.name) return &e;
    }
    return nullptr;
}

std::string sysctl_path(std::string_view name) {
    std::string path = "/proc/sys/";
    for (char c : name) path += c == '.' ? '/' : c;
    return path;
}

std::string normalize_sysctl_value(std::string_view value) {
    std::string out;
    bool blank = false;
    for (char c : value) {
        const bool is_blank = c == ' ' || c == '\t' || c == '\n' || c == '\r';
        if (is_blank) {
            blank = !out.empty();
            continue;
        }
        if (blank) out += ' ';
        blank = false;
        out += c;
    }
    return out;
}

}  // namespace nm

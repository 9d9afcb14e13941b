// The lab's iperf3 -s is ready when /proc/PID/net/tcp6 (or tcp) shows it listening: the parser, on the
// kernel's own text.
#include <catch2/catch.hpp>

#include "matrix/iperf3_lab_server.hpp"

TEST_CASE("A LISTEN socket on the port is found in /proc/net/tcp6 text, other states and ports are not", "[unit]") {
    const std::string tcp6 =
        "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout "
        "inode\n"
        "   0: 00000000000000000000000000000000:1451 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 "
        "4242 1 0 100 0 0 10 0\n"
        "   1: 0000000000000000FFFF00000100A8C6:1451 0000000000000000FFFF00000200A8C6:B2A4 01 00000000:00000000 00:00000000 00000000     0        0 "
        "4243 1 0 20 4 30 10 -1\n";
    CHECK(nm::proc_net_tcp_listens(tcp6, 5201));  // 0x1451
    CHECK_FALSE(nm::proc_net_tcp_listens(tcp6, 5301));
    const std::string established_only =
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
        "   0: 0100A8C6:1451 0200A8C6:B2A4 01 00000000:00000000 00:00000000 00000000     0        0 4243 1 0 20 4 30 10 -1\n";
    CHECK_FALSE(nm::proc_net_tcp_listens(established_only, 5201));
    CHECK_FALSE(nm::proc_net_tcp_listens("", 5201));
}

#include <catch2/catch.hpp>

#include <string>

#include "core/engine/worker_kinds.hpp"

TEST_CASE("worker_kind picks the workers registered for the plan's protocol and pattern", "[unit]") {
    nm::EnginePlan plan;
    plan.protocol = nm::Protocol::Tcp;
    const auto& tcp = nm::worker_kind(plan);
    CHECK(std::string(tcp.name) == "tcp_stream");
    CHECK(tcp.send == &nm::tcp_stream_send);
    CHECK(tcp.receive == &nm::tcp_stream_receive);
    plan.protocol = nm::Protocol::Udp;
    const auto& udp = nm::worker_kind(plan);
    CHECK(std::string(udp.name) == "udp_stream");
    CHECK(udp.send == &nm::udp_stream_send);
    CHECK(udp.receive == &nm::udp_stream_receive);
}

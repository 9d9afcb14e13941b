#include "core/engine/worker_kinds.hpp"

#include "core/base/error.hpp"

namespace nm {
namespace {

constexpr WorkerKind kWorkerKinds[] = {
    {Protocol::Tcp, TrafficPattern::Stream, "tcp_stream", tcp_stream_send, tcp_stream_receive, tcp_stream_memory},
    {Protocol::Udp, TrafficPattern::Stream, "udp_stream", udp_stream_send, udp_stream_receive, udp_stream_memory},
    {Protocol::Tcp, TrafficPattern::Rr, "tcp_rr", tcp_rr_send, tcp_rr_receive, rr_memory},
    {Protocol::Udp, TrafficPattern::Rr, "udp_rr", udp_rr_send, udp_rr_receive, rr_memory},
    {Protocol::Tcp, TrafficPattern::Crr, "tcp_crr", tcp_crr_send, tcp_crr_receive, rr_memory},
};

}  // namespace

const WorkerKind& worker_kind(const EnginePlan& plan) {
    for (const auto& k : kWorkerKinds) {
        if (k.protocol == plan.protocol && k.pattern == plan.pattern) return k;
    }
    throw usage_error("the engine has no workers for this test (protocol " + std::to_string(static_cast<int>(plan.protocol)) + ", pattern " +
                      std::to_string(static_cast<int>(plan.pattern)) + ")");
}

}  // namespace nm

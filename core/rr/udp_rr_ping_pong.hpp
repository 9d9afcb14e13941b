#pragma once
// UDP_RR's ping-pong loop (core/rr/udp_rr_ping_pong.cpp): the one-flow, one-transaction-in-flight case of
// udp_rr_send/udp_rr_receive, without the stream-set skeleton.
#include "core/workers/worker.hpp"

namespace nm {

/// True when `job` is a ping-pong (one flow in the test, plan.rr_burst 1, one socket for this worker) and
/// its socket is now blocking with the skeleton's poll time as SO_RCVTIMEO/SO_SNDTIMEO; false (the socket
/// unchanged) otherwise.
bool udp_rr_ping_pong(const WorkerJob& job);

/// The initiator's and the responder's loops, for a job udp_rr_ping_pong() said true of.
void udp_rr_ping_pong_send(WorkerJob& job);
void udp_rr_ping_pong_receive(WorkerJob& job);

}  // namespace nm

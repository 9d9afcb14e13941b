#pragma once
// The request/response ping-pong loops (core/rr/tcp_rr_ping_pong.cpp, core/rr/udp_rr_ping_pong.cpp): the
// one-flow, one-transaction-in-flight case of tcp_rr_send/tcp_rr_receive and udp_rr_send/udp_rr_receive,
// without the stream-set skeleton.
#include "core/workers/worker.hpp"

namespace nm {

/// True when `job` is a ping-pong (TCP: one flow; UDP: one flow in the test and one socket for this worker;
/// both: plan.rr_burst 1) and its socket is now blocking with the skeleton's poll time as
/// SO_RCVTIMEO/SO_SNDTIMEO; false (the socket unchanged) otherwise.
bool tcp_rr_ping_pong(const WorkerJob& job);
bool udp_rr_ping_pong(const WorkerJob& job);

/// The initiator's and the responder's loops, for a job tcp_rr_ping_pong() or udp_rr_ping_pong() said true of.
void tcp_rr_ping_pong_send(WorkerJob& job);
void tcp_rr_ping_pong_receive(WorkerJob& job);
void udp_rr_ping_pong_send(WorkerJob& job);
void udp_rr_ping_pong_receive(WorkerJob& job);

}  // namespace nm

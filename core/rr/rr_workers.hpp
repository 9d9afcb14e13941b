#pragma once
// The request/response workers, registered in the kind table (core/engine/worker_kinds.cpp). Each is a
// function of WorkerFn's signature (core/workers/worker.hpp).
#include <cstddef>
#include <cstdint>

#include "core/workers/engine_plan.hpp"
#include "core/workers/worker.hpp"

namespace nm {

// Request/response (rr_workers.cpp). "send" is the initiator (the client: starts each transaction and
// times it), "receive" the responder (the server: answers each request). TCP_RR on each flow's connection,
// UDP_RR with sequence-matched datagrams and a retransmission-free timeout, TCP_CRR with a connection per
// transaction (the responder's streams are listeners).
void tcp_rr_send(WorkerJob& job);
void tcp_rr_receive(WorkerJob& job);
void udp_rr_send(WorkerJob& job);
void udp_rr_receive(WorkerJob& job);
void tcp_crr_send(WorkerJob& job);
void tcp_crr_receive(WorkerJob& job);
uint64_t rr_memory(const EnginePlan& plan, bool sender, size_t streams);

}  // namespace nm

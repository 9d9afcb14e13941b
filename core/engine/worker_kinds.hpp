#pragma once
// The test kinds the engine runs, each a pair of worker functions, as iperf3's `struct protocol`: a kind's
// workers live in a file of their own (core/workers/tcp_stream_workers.cpp, core/workers/udp_workers.cpp), all built on
// core/workers/stream_set.hpp, and the table in core/engine/worker_kinds.cpp registers them. EndEngine looks the plan's
// kind up there and knows no protocol itself. A new kind is one file of workers plus one row.
#include "core/engine/engine.hpp"
#include "core/workers/worker.hpp"

namespace nm {

/// Bytes one worker thread of a kind allocates for its buffers and per-stream state: a sender (`sender`)
/// or a receiver of `streams` streams of `plan`, as its workers size them.
using WorkerMemoryFn = uint64_t (*)(const EnginePlan& plan, bool sender, size_t streams);

/// The workers of one test kind.
struct WorkerKind {
    Protocol protocol;
    TrafficPattern pattern;
    const char* name;   ///< netperf's and neper's name for the test: "tcp_stream"
    WorkerFn send;      ///< runs one group of plan.send_groups
    WorkerFn receive;   ///< runs one group of plan.recv_groups
    WorkerMemoryFn memory;   ///< what one of them allocates (the server's memory budget)
};

/// The kind that runs `plan` (by its protocol and pattern). Throws nm::Error (Usage) when none is
/// registered for it.
const WorkerKind& worker_kind(const EnginePlan& plan);

// TCP stream (tcp_stream_workers.cpp): bulk writes on every stream / reads to EOF.
void tcp_stream_send(WorkerJob& job);
void tcp_stream_receive(WorkerJob& job);
uint64_t tcp_stream_memory(const EnginePlan& plan, bool sender, size_t streams);

// UDP stream (udp_workers.cpp): batched sendmmsg with sequence headers / one SO_REUSEPORT socket with
// recvmmsg and loss tracking.
void udp_stream_send(WorkerJob& job);
void udp_stream_receive(WorkerJob& job);
uint64_t udp_stream_memory(const EnginePlan& plan, bool sender, size_t streams);

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

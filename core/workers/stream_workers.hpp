#pragma once
// The stream workers (bulk data one way per stream), registered in the kind table
// (core/engine/worker_kinds.cpp). Each is a function of WorkerFn's signature (core/workers/worker.hpp).
#include <cstddef>
#include <cstdint>

#include "core/workers/engine_plan.hpp"
#include "core/workers/worker.hpp"

namespace nm {

// TCP stream (tcp_stream_workers.cpp): bulk writes on every stream / reads to EOF.
void tcp_stream_send(WorkerJob& job);
void tcp_stream_receive(WorkerJob& job);
uint64_t tcp_stream_memory(const EnginePlan& plan, bool sender, size_t streams);

// UDP stream (udp_workers.cpp): batched sendmmsg with sequence headers / one SO_REUSEPORT socket with
// recvmmsg and loss tracking.
void udp_stream_send(WorkerJob& job);
void udp_stream_receive(WorkerJob& job);
uint64_t udp_stream_memory(const EnginePlan& plan, bool sender, size_t streams);

}  // namespace nm

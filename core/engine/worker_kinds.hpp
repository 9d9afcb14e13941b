#pragma once
// The test kinds the engine runs, each a pair of worker functions, as iperf3's `struct protocol`: a kind's
// workers live in a file of their own (core/workers/stream_workers.hpp: TCP and UDP streams;
// core/rr/rr_workers.hpp: request/response), all built on core/workers/stream_set.hpp, and the table in
// core/engine/worker_kinds.cpp registers them. EndEngine looks the plan's kind up there and knows no
// protocol itself. A new kind is one file of workers plus one row.
#include "core/rr/rr_workers.hpp"
#include "core/workers/engine_plan.hpp"
#include "core/workers/stream_workers.hpp"
#include "core/workers/worker.hpp"

namespace nm {

/// Bytes one worker thread of a kind allocates for its buffers and per-stream state: a sender (`sender`)
/// or a receiver of `streams` streams of `plan`, as its workers size them.
using WorkerMemoryFn = uint64_t (*)(const EnginePlan& plan, bool sender, size_t streams);

/// The workers of one test kind.
struct WorkerKind {
    Protocol protocol;
    TrafficPattern pattern;
    const char* name;       ///< netperf's and neper's name for the test: "tcp_stream"
    WorkerFn send;          ///< runs one group of plan.send_groups
    WorkerFn receive;       ///< runs one group of plan.recv_groups
    WorkerMemoryFn memory;  ///< what one of them allocates (the server's memory budget)
};

/// The kind that runs `plan` (by its protocol and pattern). Throws nm::Error (Usage) when none is
/// registered for it.
const WorkerKind& worker_kind(const EnginePlan& plan);

}  // namespace nm

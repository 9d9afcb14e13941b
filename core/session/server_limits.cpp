#include "core/session/server_limits.hpp"

#include <algorithm>
#include <cstdio>

#include "core/base/number_text.hpp"
#include "core/engine/engine.hpp"
#include "core/session/traffic_session.hpp"

namespace nm {
namespace {

// Threads and streams of one side of the server's plan: how spread_streams and make_udp_receivers make them.
uint64_t side_memory(const EnginePlan& plan, bool sender, uint32_t streams, uint32_t threads) {
    if (streams == 0) return 0;
    if (plan.protocol == Protocol::Udp && !sender) {
        // One SO_REUSEPORT socket per receiver thread, each its own group.
        return uint64_t{threads} * worker_memory_bytes(plan, false, 1);
    }
    const uint32_t groups = std::max<uint32_t>(1, std::min(threads, streams));
    const uint32_t per_group = (streams + groups - 1) / groups;
    return uint64_t{groups} * worker_memory_bytes(plan, sender, per_group);
}

}  // namespace

uint64_t server_test_memory(const TestSpec& spec) {
    const EnginePlan plan = plan_for(spec, Direction::Reverse, "");
    const uint32_t n = std::max<uint32_t>(1, spec.streams);
    const uint32_t threads = std::max<uint32_t>(1, spec.threads);
    const uint32_t sent = spec.direction == Direction::Forward ? 0 : n;
    const uint32_t received = spec.direction == Direction::Reverse ? 0 : n;
    return side_memory(plan, true, sent, threads) + side_memory(plan, false, received, threads);
}

std::string format_bytes(uint64_t bytes) {
    const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    double v = static_cast<double>(bytes);
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        ++u;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.3g %s", v, units[u]);
    return buf;
}

std::optional<std::string> over_server_limits(const TestSpec& spec, const ServerLimits& limits, unsigned cores) {
    std::vector<std::string> over;
    const double length = spec.omit_s + spec.duration_s;
    const auto max_s = static_cast<double>(limits.max_duration.count());
    if (spec.bytes == 0 && length > max_s) {
        over.push_back("duration: " + number_text(length) + " s (omit included); this server allows " + number_text(max_s) +
                       " s per test (raise with serve --max-duration)");
    }
    if (spec.stall_timeout_s > limits.max_stall_timeout_s) {
        over.push_back("stall timeout: " + number_text(spec.stall_timeout_s) + " s; this server allows " + number_text(limits.max_stall_timeout_s) +
                       " s (raise with serve --max-stall-timeout)");
    }
    const uint32_t max_threads = limits.max_threads > 0 ? limits.max_threads : std::max(1u, cores);
    if (spec.threads > max_threads) {
        over.push_back("threads: " + std::to_string(spec.threads) + " per direction; this server allows " + std::to_string(max_threads) +
                       (limits.max_threads > 0 ? "" : ", its cores,") + " (raise with serve --max-threads)");
    }
    const uint64_t memory = server_test_memory(spec);
    if (memory > limits.max_test_memory_bytes) {
        over.push_back("memory: the test needs " + format_bytes(memory) + " of engine buffers on the server (" + std::to_string(spec.streams) +
                       " stream(s) per direction over " + std::to_string(spec.threads) + " thread(s), " +
                       format_bytes(plan_for(spec, Direction::Reverse, "").write_size) + " writes" +
                       (spec.direction == Direction::Bidir ? ", both directions" : "") + "); this server allows " +
                       format_bytes(limits.max_test_memory_bytes) + " per test (raise with serve --max-test-memory)");
    }
    if (over.empty()) return std::nullopt;
    std::string text = "over the server's limits: ";
    for (size_t i = 0; i < over.size(); ++i) text += (i > 0 ? "; " : "") + over[i];
    return text;
}

}  // namespace nm

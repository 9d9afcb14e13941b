#include "core/workers/window_meter.hpp"

#include <sched.h>
#include <sys/resource.h>

#include <algorithm>

namespace nm {

ThreadCpu thread_cpu_now() {
    rusage ru{};
    ::getrusage(RUSAGE_THREAD, &ru);
    const auto secs = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; };
    return {secs(ru.ru_utime), secs(ru.ru_stime)};
}

int current_cpu() { return ::sched_getcpu(); }

// sched_getcpu is a vDSO call (no system call), cheap enough for every turn of a worker's loop; the set
// is touched only when the CPU changed since the last tick.
void WindowMeter::note_cpu() {
    const int cpu = cpu_id_();
    if (cpu < 0 || cpu == last_cpu_) return;
    last_cpu_ = cpu;
    auto& v = out_.cpus;
    const auto c = static_cast<uint32_t>(cpu);
    const auto it = std::lower_bound(v.begin(), v.end(), c);
    if (it == v.end() || *it != c) v.insert(it, c);
}

bool WindowMeter::tick(TimePoint now) {
    began_ = false;
    if (state_ == State::Before && now >= tl_.window_start) {
        cpu_start_ = cpu_now_();
        state_ = State::In;
        began_ = true;
    }
    if (state_ == State::In && now >= tl_.window_end) close();
    if (state_ == State::In) note_cpu();
    return state_ == State::In;
}

void WindowMeter::count(TimePoint now, uint64_t bytes, uint64_t packets) {
    out_.last_count = now;
    if (tl_.interval.count() <= 0) return;
    const auto k = static_cast<size_t>((now - tl_.window_start) / tl_.interval);
    if (k >= out_.interval_bytes.size()) {
        out_.interval_bytes.resize(k + 1, 0);
        out_.interval_packets.resize(k + 1, 0);
    }
    out_.interval_bytes[k] += bytes;
    out_.interval_packets[k] += packets;
}

void WindowMeter::close() {
    if (state_ != State::In) return;
    const ThreadCpu end = cpu_now_();
    out_.cpu.user_s = end.user_s - cpu_start_.user_s;
    out_.cpu.sys_s = end.sys_s - cpu_start_.sys_s;
    state_ = State::After;
}

}  // namespace nm

#include "core/window_meter.hpp"

#include <sys/resource.h>

namespace nm {

ThreadCpu thread_cpu_now() {
    rusage ru{};
    ::getrusage(RUSAGE_THREAD, &ru);
    const auto secs = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; };
    return {secs(ru.ru_utime), secs(ru.ru_stime)};
}

bool WindowMeter::tick(TimePoint now) {
    began_ = false;
    if (state_ == State::Before && now >= tl_.window_start) {
        cpu_start_ = cpu_now_();
        state_ = State::In;
        began_ = true;
    }
    if (state_ == State::In && now >= tl_.window_end) close();
    return state_ == State::In;
}

void WindowMeter::count(TimePoint now, uint64_t bytes, uint64_t packets) {
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

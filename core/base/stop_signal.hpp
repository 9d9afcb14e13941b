#pragma once
#include <atomic>
#include <csignal>
#include <stop_token>
#include <thread>

namespace nm {

/// Turns SIGINT, SIGTERM and SIGHUP into a std::stop_token that long operations (a sweep, a test, the
/// agent) poll, so they end through their normal path and restore what they changed. Construct it in
/// main() before any other thread starts: it blocks those signals in the calling thread, which every
/// later thread inherits, and one thread of its own takes them with sigwait(). A second signal while
/// stopping is taken as "stop now" and re-raised with the default action.
class StopSignal {
public:
    StopSignal();
    ~StopSignal();
    StopSignal(const StopSignal&) = delete;
    StopSignal& operator=(const StopSignal&) = delete;

    std::stop_token token() const { return source_.get_token(); }
    /// The signal that asked to stop, 0 if none.
    int signal() const { return signal_.load(); }

private:
    std::stop_source source_;
    std::atomic<int> signal_{0};
    sigset_t set_{};
    std::jthread waiter_;
};

}  // namespace nm

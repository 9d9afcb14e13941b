#pragma once
#include <atomic>
#include <csignal>
#include <functional>
#include <stop_token>
#include <thread>

namespace nm {

/// Turns SIGINT, SIGTERM and SIGHUP into a std::stop_token that long operations (a sweep, a test, the
/// agent) poll, so they end through their normal path and restore what they changed. Construct it in
/// main() before any other thread starts: it blocks those signals in the calling thread, which every
/// later thread inherits, and one thread of its own takes them with sigwaitinfo().
///
/// Every signal after the first is only counted (and passed to `on_repeat`): a stop is already under
/// way, and the restore it leads to must not be cut short, so a second Ctrl-C never kills the process.
/// SIGHUP that was ignored when the process started (`nohup`) stays ignored. SIGUSR2 is the waiter's
/// private wake-up: it is blocked too, and one that another process sends is discarded (its si_pid is
/// not ours), so no foreign signal can end the waiter or kill the process.
class StopSignal {
public:
    /// `on_repeat(signal, count)` is called on the waiter thread for every signal after the first
    /// (count 2, 3, ...); it must not throw. Empty = nothing is told.
    explicit StopSignal(std::function<void(int, int)> on_repeat = {});
    ~StopSignal();
    StopSignal(const StopSignal&) = delete;
    StopSignal& operator=(const StopSignal&) = delete;

    std::stop_token token() const { return source_.get_token(); }
    /// The signal that asked to stop, 0 if none.
    int signal() const { return signal_.load(); }
    /// How many stop signals arrived so far.
    int count() const { return count_.load(); }

private:
    std::stop_source source_;
    std::atomic<int> signal_{0};
    std::atomic<int> count_{0};
    std::atomic<bool> closing_{false};
    std::function<void(int, int)> on_repeat_;
    sigset_t set_{};
    std::jthread waiter_;
};

}  // namespace nm

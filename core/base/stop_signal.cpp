#include "core/base/stop_signal.hpp"

#include <pthread.h>
#include <unistd.h>

#include <cerrno>

namespace nm {
namespace {

bool ignored_at_start(int sig) {
    struct sigaction now {};
    return ::sigaction(sig, nullptr, &now) == 0 && now.sa_handler == SIG_IGN;
}

}  // namespace

StopSignal::StopSignal(std::function<void(int, int)> on_repeat) : on_repeat_(std::move(on_repeat)) {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    // `nohup` starts us with SIGHUP ignored so that closing the terminal does not stop the sweep.
    if (!ignored_at_start(SIGHUP)) sigaddset(&set_, SIGHUP);
    sigaddset(&set_, SIGUSR2);  // our own wake-up, sent by the destructor
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);
    waiter_ = std::jthread([this] {
        const pid_t self = ::getpid();
        for (;;) {
            siginfo_t info{};
            const int sig = ::sigwaitinfo(&set_, &info);
            if (sig < 0) continue;  // EINTR
            if (sig == SIGUSR2) {
                // Only the destructor's pthread_kill (sent by this process, once closing) ends the
                // waiter; a SIGUSR2 from anybody else is dropped and the waiter goes on.
                if (info.si_pid == self && closing_.load()) return;
                continue;
            }
            const int n = count_.fetch_add(1) + 1;
            if (n == 1) {
                signal_.store(sig);
                source_.request_stop();
            } else if (on_repeat_) {
                try {
                    on_repeat_(sig, n);
                } catch (...) {  // NOLINT(bugprone-empty-catch): telling is best effort; waiting goes on
                }
            }
        }
    });
}

StopSignal::~StopSignal() {
    closing_.store(true);
    pthread_kill(waiter_.native_handle(), SIGUSR2);
    waiter_.join();
    // Signals that came after the waiter left (a late Ctrl-C, a stray SIGUSR2) would take their default
    // action once unblocked and kill a process that has already restored everything: take them first.
    const timespec none{0, 0};
    while (::sigtimedwait(&set_, nullptr, &none) > 0) {}
    pthread_sigmask(SIG_UNBLOCK, &set_, nullptr);
}

}  // namespace nm

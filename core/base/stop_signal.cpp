#include "core/base/stop_signal.hpp"

#include <pthread.h>

namespace nm {

StopSignal::StopSignal() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    sigaddset(&set_, SIGHUP);
    sigaddset(&set_, SIGUSR2);   // our own wake-up, sent by the destructor
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);
    waiter_ = std::jthread([this] {
        for (;;) {
            int sig = 0;
            if (sigwait(&set_, &sig) != 0) continue;
            if (sig == SIGUSR2) return;
            if (source_.stop_requested()) {
                // Second signal: the user means it. Default action, no more cleanup.
                ::signal(sig, SIG_DFL);
                pthread_sigmask(SIG_UNBLOCK, &set_, nullptr);
                ::raise(sig);
                return;
            }
            signal_.store(sig);
            source_.request_stop();
        }
    });
}

StopSignal::~StopSignal() {
    pthread_kill(waiter_.native_handle(), SIGUSR2);
    waiter_.join();
    pthread_sigmask(SIG_UNBLOCK, &set_, nullptr);
}

}  // namespace nm

#pragma once
// The lab's far end for `sweep --lab --peer-kind iperf3`: Debian's `iperf3 -s` as a child process in the
// lab's server namespace, so a sweep against a stock iperf3 can be set beside one against the engine's
// own server on the same lab.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <stop_token>
#include <string>

#include "matrix/lab_session.hpp"

namespace nm {

/// Starts `iperf3 -s -p PORT --json` (its output to `log_path`, or nowhere when empty) in the calling
/// thread's network namespace and waits, polling /proc/PID/net/tcp6 and tcp by a deadline, until it
/// listens. Throws nm::Error (Failed) when iperf3 cannot be started (not installed: the error says which
/// package) or does not listen within `start_timeout`; the process is ended then. serve() waits for the
/// stop token, then ends the process (SIGTERM, SIGKILL after 2 s) and reaps it; the destructor does the
/// same when serve() never ran.
class Iperf3LabServer final : public LabServer {
public:
    explicit Iperf3LabServer(uint16_t port, const std::string& log_path = {},
                             std::chrono::milliseconds start_timeout = std::chrono::milliseconds(4000));
    ~Iperf3LabServer() override;
    Iperf3LabServer(const Iperf3LabServer&) = delete;
    Iperf3LabServer& operator=(const Iperf3LabServer&) = delete;

    uint16_t port() const override { return port_; }
    void serve(std::stop_token stop) override;
    pid_t pid() const { return pid_; }

private:
    void end_process() noexcept;

    uint16_t port_;
    pid_t pid_ = -1;
};

/// True when `proc_net_tcp` (the text of /proc/PID/net/tcp or tcp6) has a socket listening on `port`. Pure.
bool proc_net_tcp_listens(const std::string& proc_net_tcp, uint16_t port);

}  // namespace nm

#include "tests/support/hello_engine.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include "core/base/error.hpp"

namespace nm::test {

HelloServer::HelloServer() : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    if (!fd_) throw system_error("socket", errno);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    if (::bind(fd_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) throw system_error("bind", errno);
    if (::listen(fd_.get(), 8) != 0) throw system_error("listen", errno);
    socklen_t len = sizeof addr;
    ::getsockname(fd_.get(), reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
}

void HelloServer::serve(std::stop_token stop) {
    while (!stop.stop_requested()) {
        pollfd p{fd_.get(), POLLIN, 0};
        if (::poll(&p, 1, 50) <= 0) continue;
        UniqueFd c(::accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
        if (c) (void)!::write(c.get(), "hello", 5);
    }
}

RunResult HelloClient::run(const TestSpec& spec, std::stop_token) {
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(spec.port);
    ::inet_pton(AF_INET, spec.host.c_str(), &to.sin_addr);
    RunResult r;
    r.spec = spec;
    if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) throw system_error("connect to " + spec.host, errno);
    char buf[16];
    ssize_t n = 0;
    while ((n = ::read(fd.get(), buf, sizeof buf)) > 0) r.bytes += static_cast<uint64_t>(n);
    r.duration_s = spec.duration_s;
    r.throughput_bps = static_cast<double>(r.bytes) * 8 / std::max(spec.duration_s, 1e-3);
    return r;
}

}  // namespace nm::test

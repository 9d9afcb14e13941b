#include "core/host/net.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>

#include <cerrno>
#include <cstring>

#include "core/base/error.hpp"

namespace nm {
namespace {

std::string describe(const SocketAddress& a) {
    const std::string h = a.host();
    return (h.find(':') != std::string::npos ? "[" + h + "]" : h) + ":" + std::to_string(a.port());
}

int remaining_ms(Deadline deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    return left.count() <= 0 ? 0 : static_cast<int>(std::min<long long>(left.count() + 1, 1000LL * 3600));
}

}  // namespace

std::string SocketAddress::host() const {
    char buf[INET6_ADDRSTRLEN] = {};
    if (family() == AF_INET) {
        ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&storage)->sin_addr, buf, sizeof buf);
    } else if (family() == AF_INET6) {
        const auto* s6 = reinterpret_cast<const sockaddr_in6*>(&storage);
        if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
            ::inet_ntop(AF_INET, &s6->sin6_addr.s6_addr[12], buf, sizeof buf);
        } else {
            ::inet_ntop(AF_INET6, &s6->sin6_addr, buf, sizeof buf);
        }
    }
    return buf;
}

uint16_t SocketAddress::port() const {
    if (family() == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&storage)->sin_port);
    if (family() == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_port);
    return 0;
}

void SocketAddress::set_port(uint16_t port) {
    if (family() == AF_INET) reinterpret_cast<sockaddr_in*>(&storage)->sin_port = htons(port);
    if (family() == AF_INET6) reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port = htons(port);
}

bool host_bytes(const sockaddr_storage& a, bool& v6, std::array<uint8_t, 16>& out) {
    out.fill(0);
    if (a.ss_family == AF_INET) {
        v6 = false;
        std::memcpy(out.data(), &reinterpret_cast<const sockaddr_in*>(&a)->sin_addr, 4);
        return true;
    }
    if (a.ss_family == AF_INET6) {
        const auto& addr = reinterpret_cast<const sockaddr_in6*>(&a)->sin6_addr;
        v6 = !IN6_IS_ADDR_V4MAPPED(&addr);
        if (v6) std::memcpy(out.data(), &addr, 16);
        else std::memcpy(out.data(), &addr.s6_addr[12], 4);
        return true;
    }
    return false;
}

bool same_host(const sockaddr_storage& a, const SocketAddress& b) {
    bool v6a = false, v6b = false;
    std::array<uint8_t, 16> x{}, y{};
    return host_bytes(a, v6a, x) && host_bytes(b.storage, v6b, y) && v6a == v6b && x == y;
}

SocketAddress resolve_address(const std::string& host, uint16_t port) {
    if (host.empty()) throw usage_error("host: empty; give the server's address with -c HOST");
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* res = nullptr;
    const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
    if (rc != 0 || res == nullptr) {
        throw usage_error("host \"" + host + "\": " + (rc == EAI_SYSTEM ? std::strerror(errno) : ::gai_strerror(rc)));
    }
    SocketAddress a;
    std::memcpy(&a.storage, res->ai_addr, res->ai_addrlen);
    a.len = res->ai_addrlen;
    ::freeaddrinfo(res);
    return a;
}

SocketAddress local_address(int fd) {
    SocketAddress a;
    a.len = sizeof a.storage;
    if (::getsockname(fd, a.get(), &a.len) != 0) throw system_error("getsockname", errno);
    return a;
}

SocketAddress peer_address(int fd) {
    SocketAddress a;
    a.len = sizeof a.storage;
    if (::getpeername(fd, a.get(), &a.len) != 0) throw system_error("getpeername", errno);
    return a;
}

UniqueFd listen_tcp(const std::string& bind, uint16_t port) {
    SocketAddress a;
    if (bind.empty()) {
        auto* s6 = reinterpret_cast<sockaddr_in6*>(&a.storage);
        s6->sin6_family = AF_INET6;
        s6->sin6_addr = in6addr_any;
        s6->sin6_port = htons(port);
        a.len = sizeof(sockaddr_in6);
    } else {
        a = resolve_address(bind, port);
    }
    UniqueFd fd(::socket(a.family(), SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd) throw system_error("socket", errno);
    const int one = 1, zero = 0;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (a.family() == AF_INET6 && bind.empty()) ::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    if (::bind(fd.get(), a.get(), a.len) != 0) throw system_error("listen on " + describe(a), errno);
    if (::listen(fd.get(), 128) != 0) throw system_error("listen on " + describe(a), errno);
    return fd;
}

UniqueFd connect_tcp(const SocketAddress& to, const std::string& bind, uint32_t window, Deadline deadline, const std::function<void(int)>& prepare) {
    UniqueFd fd(::socket(to.family(), SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd) throw system_error("socket", errno);
    set_buffer_sizes(fd.get(), window);
    if (prepare) prepare(fd.get());
    if (!bind.empty()) {
        const SocketAddress local = resolve_address(bind, 0);
        if (local.family() != to.family()) throw usage_error("--bind " + bind + ": not the address family of the server's address");
        if (::bind(fd.get(), local.get(), local.len) != 0) throw system_error("bind to " + bind, errno);
    }
    if (::connect(fd.get(), to.get(), to.len) != 0) {
        if (errno != EINPROGRESS) throw system_error("connect to " + describe(to), errno);
        if (!wait_fd(fd.get(), POLLOUT, deadline)) throw system_error("connect to " + describe(to), ETIMEDOUT);
        int err = 0;
        socklen_t len = sizeof err;
        ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0) throw system_error("connect to " + describe(to), err);
    }
    return fd;
}

void set_nonblocking(int fd, bool on) {
    const int flags = ::fcntl(fd, F_GETFL);
    ::fcntl(fd, F_SETFL, on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK);
}

void set_buffer_sizes(int fd, uint32_t bytes) {
    if (bytes == 0) return;
    const int v = static_cast<int>(bytes);
    if (::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof v) != 0) throw system_error("set SO_SNDBUF", errno);
    if (::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof v) != 0) throw system_error("set SO_RCVBUF", errno);
}

bool wait_fd(int fd, short events, Deadline deadline) {
    for (;;) {
        pollfd p{fd, events, 0};
        const int rc = ::poll(&p, 1, remaining_ms(deadline));
        if (rc > 0) return true;
        if (rc == 0) return false;
        if (errno != EINTR) throw system_error("poll", errno);
    }
}

void send_all(int fd, const void* data, size_t size, Deadline deadline, const std::string& what) {
    const auto* p = static_cast<const char*>(data);
    while (size > 0) {
        const ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            size -= static_cast<size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!wait_fd(fd, POLLOUT, deadline)) throw system_error(what, ETIMEDOUT);
            continue;
        }
        throw system_error(what, errno);
    }
}

void recv_exact(int fd, void* data, size_t size, Deadline deadline, const std::string& what) {
    auto* p = static_cast<char*>(data);
    while (size > 0) {
        const ssize_t n = ::recv(fd, p, size, MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            size -= static_cast<size_t>(n);
            continue;
        }
        if (n == 0) throw Error(ErrorKind::Failed, what + ": connection closed by peer");
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            if (!wait_fd(fd, POLLIN, deadline)) throw system_error(what, ETIMEDOUT);
            continue;
        }
        throw system_error(what, errno);
    }
}

}  // namespace nm

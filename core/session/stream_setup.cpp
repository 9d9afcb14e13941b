#include "core/session/stream_setup.hpp"

#include <sys/socket.h>

#include "core/host/socket_options.hpp"
#include "core/session/traffic_session.hpp"

namespace nm {
namespace {

/// Whose -w a socket's buffers carry: this end's user on the client, the remote client's on the server.
WindowSource window_source(End end) { return end == End::Client ? WindowSource::Local : WindowSource::Remote; }

}  // namespace

EndStreams::EndStreams(const TestSpec& spec, End end, SocketAddress local, SocketAddress peer)
    : spec_(spec), end_(end), layout_(StreamLayout::of(spec)), local_(local), peer_(peer) {}

EnginePlan EndStreams::plan(std::string iface, uint32_t cookie) const {
    EnginePlan plan = plan_for(spec_, end_ == End::Client ? Direction::Forward : Direction::Reverse, std::move(iface));
    plan.cpus = end_ == End::Client ? spec_.client_cpus : spec_.server_cpus;
    plan.peer = peer_;
    plan.udp_cookie = cookie;  // in every datagram both ways; a receiver counts only the peer's
    plan.udp_peer = peer_;
    return plan;
}

uint16_t EndStreams::open_udp_receivers(EnginePlan& plan, uint16_t preferred_port) const {
    if (spec_.protocol != Protocol::Udp || !receives()) return 0;
    uint16_t port = 0;
    plan.recv_groups = make_udp_receivers(local_, preferred_port, spec_.threads, spec_.window, window_source(end_), port);
    for (auto& g : plan.recv_groups) apply_udp_options(g.front().fd.get(), spec_.socket, end_ == End::Client);
    return port;
}

void EndStreams::prepare_tcp(int fd, uint32_t id) const {
    set_buffer_sizes(fd, spec_.window);  // plain SO_SNDBUF/SO_RCVBUF: capped by the kernel
    const bool rr = spec_.pattern != TrafficPattern::Stream;
    apply_tcp_options(fd, spec_.socket, {.client = end_ == End::Client, .sends = rr || layout_.sender_of(id) == end_});
}

void EndStreams::add_tcp(DataStream stream) { (layout_.sender_of(stream.id) == end_ ? sends_ : recvs_).push_back(std::move(stream)); }

void EndStreams::open_udp_senders(uint16_t peer_udp_port) {
    if (spec_.protocol != Protocol::Udp) return;
    SocketAddress to = peer_;
    to.set_port(peer_udp_port);
    const StreamIds ids = layout_.sent_by(end_);
    for (uint32_t id = ids.first; id < ids.end; ++id) {
        sends_.push_back(make_udp_sender(to, local_, id, spec_.window, window_source(end_)));
        const int fd = sends_.back().fd.get();
        apply_udp_options(fd, spec_.socket, end_ == End::Client);
        if (spec_.pattern != TrafficPattern::Stream) {
            // Room for a whole burst of answers of the largest size.
            const int bytes = 8 << 20;
            if (::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof bytes) != 0)
                ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
        }
    }
}

void EndStreams::place(EnginePlan& plan) {
    plan.send_groups = spread_streams(std::move(sends_), spec_.threads);
    if (spec_.protocol == Protocol::Tcp && spec_.pattern != TrafficPattern::Crr) plan.recv_groups = spread_streams(std::move(recvs_), spec_.threads);
    sends_.clear();
    recvs_.clear();
}

}  // namespace nm

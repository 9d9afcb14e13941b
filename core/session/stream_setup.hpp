#pragma once
// One end's data streams, set up the same way by client and server: which streams an end sends and which
// it receives follows StreamLayout, and every socket gets the test's options for its end and its role.
// Only how a TCP data connection comes to exist differs between the ends (the client connects each and
// sends its DataHeader, the server accepts them and matches the header), so that step is the caller's:
// it prepares each connection with prepare_tcp() and hands it over with add_tcp().
//
//   EndStreams streams(spec, End::Client, local, server);
//   EnginePlan plan = streams.plan(iface, cookie);
//   uint16_t my_udp_port = streams.open_udp_receivers(plan, 0);   // before the peer may send
//   ... TCP: connect (client) or accept (server), prepare_tcp(), add_tcp() for each data connection
//   streams.open_udp_senders(peer_udp_port);
//   streams.place(plan);                                           // the plan's worker groups
#include <cstdint>
#include <string>
#include <vector>

#include "core/engine/engine.hpp"
#include "core/host/net.hpp"
#include "core/traffic/traffic_types.hpp"
#include "core/workers/stream_layout.hpp"

namespace nm {

class EndStreams {
public:
    /// `local`: this end's address on the control connection (data sockets bind to its address); `peer`:
    /// the other end's control address (UDP senders and CRR/UDP RR responders answer only it).
    EndStreams(const TestSpec& spec, End end, SocketAddress local, SocketAddress peer);

    const StreamLayout& layout() const { return layout_; }
    /// True when this end receives what the peer sends.
    bool receives() const { return layout_.receives(end_); }

    /// This end's plan without sockets: plan_for() with the direction it sends, its CPUs (client_cpus or
    /// server_cpus), its counters' interface, the peer, and the test's cookie in every datagram.
    EnginePlan plan(std::string iface, uint32_t cookie) const;

    /// When this end receives UDP: one SO_REUSEPORT group of receivers (a socket per thread) bound to the
    /// local address, on `preferred_port` when it is free, else on a port the kernel picks, into
    /// plan.recv_groups. Returns the port (0 when this end receives no UDP).
    uint16_t open_udp_receivers(EnginePlan& plan, uint16_t preferred_port) const;

    /// The test's options on TCP data connection `id` at this end: the buffer sizes (-w) and the socket
    /// knobs for its role. The client calls it before it connects, the server once it has accepted.
    void prepare_tcp(int fd, uint32_t id) const;
    /// A prepared TCP data connection (or a CRR client's unconnected placeholder): sent on when this end
    /// sends its id, received from otherwise.
    void add_tcp(DataStream stream);

    /// One UDP sender per stream this end sends, from the local address to the peer's receivers on
    /// `peer_udp_port` (none when this end sends no UDP).
    void open_udp_senders(uint16_t peer_udp_port);

    /// Deals the streams out to the test's threads: plan.send_groups, and plan.recv_groups of a TCP end
    /// that receives on its data connections (UDP's receivers and the server's CRR listeners are already
    /// in place).
    void place(EnginePlan& plan);

private:
    const TestSpec& spec_;
    End end_;
    StreamLayout layout_;
    SocketAddress local_;
    SocketAddress peer_;
    std::vector<DataStream> sends_, recvs_;
};

}  // namespace nm

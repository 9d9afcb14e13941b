#include "core/traffic_client.hpp"

#include <algorithm>

#include "core/base/error.hpp"
#include "core/control_channel.hpp"
#include "core/proc_stats.hpp"
#include "core/stream_layout.hpp"
#include "core/traffic_session.hpp"

namespace nm {
namespace {

std::string where(const TestSpec& spec) { return spec.host + ":" + std::to_string(spec.port); }

// An "error" reply during setup becomes the matching nm::Error.
void throw_if_error(const Json& msg, const TestSpec& spec) {
    if (!is(msg, Msg::Error)) return;
    const auto message = msg.value("message", std::string("error"));
    switch (wire_error_of(msg)) {
        case WireError::Busy: throw Error(ErrorKind::Refused, "server " + where(spec) + " is busy (" + message + ")");
        case WireError::Usage: throw usage_error("server " + where(spec) + " rejected the test: " + message);
        default: throw error_from_message(msg, "server " + where(spec));
    }
}

}  // namespace

RunResult TrafficClient::run(const TestSpec& requested, std::stop_token stop) {
    const TestSpec spec = resolve_spec(requested, engine_cores());
    const SocketAddress server = resolve_address(spec.host, spec.port);
    ControlChannel ch(connect_tcp(server, spec.bind, 0, deadline_in(kHandshakeTimeout)));
    ch.send(Msg::Hello, Json{{"spec", spec}}, deadline_in(kHandshakeTimeout));
    const Json ready = ch.expect(deadline_in(kHandshakeTimeout), "the server's reply to hello from " + where(spec));
    throw_if_error(ready, spec);
    if (!is(ready, Msg::Ready)) throw Error(ErrorKind::Failed, "server " + where(spec) + ": unexpected reply");
    const auto cookie = ready.at("cookie").get<uint32_t>();
    const auto server_udp_port = ready.at("udp_port").get<uint16_t>();
    // The server resolves its automatic values with its own core count; both ends must agree on streams.
    TestSpec agreed = spec;
    agreed.streams = ready.at("spec").at("streams").get<uint32_t>();

    const StreamLayout layout = StreamLayout::of(agreed);
    const bool udp = spec.protocol == Protocol::Udp;
    const bool client_receives = layout.receives(End::Client);
    const SocketAddress local = local_address(ch.fd());

    EnginePlan plan = plan_for(agreed, Direction::Forward, !spec.iface.empty() ? spec.iface : iface_for_address(local.host()));

    std::vector<DataStream> sends, recvs;
    uint16_t client_udp_port = 0;
    if (udp) {
        if (client_receives) plan.recv_groups = make_udp_receivers(local, 0, agreed.threads, spec.window, client_udp_port);
        if (layout.sends(End::Client)) {
            SocketAddress peer = server;
            peer.set_port(server_udp_port);
            const StreamIds ids = layout.sent_by(End::Client);
            for (uint32_t id = ids.first; id < ids.end; ++id) sends.push_back(make_udp_sender(peer, id, spec.window));
        }
    } else {
        for (uint32_t id = 0; id < layout.data_connections(); ++id) {
            DataStream s{connect_tcp(server, spec.bind, spec.window, deadline_in(kHandshakeTimeout)), id};
            const auto header = DataHeader{cookie, id}.encode();
            send_all(s.fd.get(), header.data(), header.size(), deadline_in(kHandshakeTimeout), "data connection header");
            (layout.sender_of(id) == End::Client ? sends : recvs).push_back(std::move(s));
        }
    }
    plan.send_groups = spread_streams(std::move(sends), agreed.threads);
    if (!udp) plan.recv_groups = spread_streams(std::move(recvs), agreed.threads);

    ch.send(Msg::Start, Json{{"udp_port", client_udp_port}}, deadline_in(kHandshakeTimeout));
    const Json started = ch.expect(deadline_in(kHandshakeTimeout), "the server to start the test");
    throw_if_error(started, spec);

    EndEngine engine(std::move(plan));
    const Timeline tl = make_timeline(agreed, std::chrono::steady_clock::now());
    engine.start(tl);
    LoopOutcome outcome = run_end_loop(ch, engine, agreed, tl, client_receives, stop);
    EndReport mine = engine.finish(outcome.status, outcome.error);

    // The server's report: wait for it within the grace period (shorter when the run already failed).
    std::optional<EndReport> theirs = std::move(outcome.peer_report);
    if (!theirs && !outcome.channel_lost) {
        const auto limit = deadline_in(outcome.status == RunStatus::Ok ? std::chrono::milliseconds(kEndGrace)
                                                              : std::chrono::milliseconds(1000));
        try {
            while (!theirs) {
                auto msg = ch.receive(limit);
                if (!msg) break;
                if (is(*msg, Msg::Result)) theirs = msg->at("report").get<EndReport>();
                if (is(*msg, Msg::Error)) {
                    if (outcome.status == RunStatus::Ok) {
                        outcome.status = RunStatus::PeerLost;
                        outcome.error = "server: " + msg->value("message", std::string("error"));
                    }
                    break;
                }
            }
        } catch (const Error& e) {
            if (outcome.status == RunStatus::Ok) {
                outcome.status = RunStatus::PeerLost;
                outcome.error = std::string("server lost: ") + e.what();
            }
        }
        if (!theirs && outcome.status == RunStatus::Ok) {
            outcome.status = RunStatus::PeerLost;
            outcome.error = "server lost: no result from " + where(spec) + " within " + std::to_string(kEndGrace.count()) + " s";
        }
    }
    if (outcome.status == RunStatus::PeerLost && outcome.error.find(where(spec)) == std::string::npos) {
        outcome.error += " (server " + where(spec) + ")";
    }
    return combine_reports(agreed, mine, theirs.value_or(EndReport{}), outcome.status, outcome.error, server.family());
}

}  // namespace nm

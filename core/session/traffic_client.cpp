#include "core/session/traffic_client.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include "core/base/error.hpp"
#include "core/base/json_integer.hpp"
#include "core/control/control_channel.hpp"
#include "core/control/message_auth.hpp"
#include "core/control/test_auth.hpp"
#include "core/engine/end_profiler.hpp"
#include "core/host/cpu_affinity.hpp"
#include "core/host/proc_stats.hpp"
#include "core/host/socket_options.hpp"
#include "core/profile/categories.hpp"
#include "core/session/stream_setup.hpp"
#include "core/session/traffic_session.hpp"
#include "core/workers/stream_layout.hpp"

namespace nm {
namespace {

std::string where(const TestSpec& spec) { return spec.host + ":" + std::to_string(spec.port); }

// An "error" reply during setup becomes the matching nm::Error.
void throw_if_error(const Json& msg, const TestSpec& spec) {
    if (!is(msg, Msg::Error)) return;
    const auto text = msg.find("message");  // a server's message may be anything: read it with care
    const std::string message = text != msg.end() && text->is_string() ? text->get<std::string>() : "error";
    switch (wire_error_of(msg)) {
        case WireError::Busy: throw Error(ErrorKind::Refused, "server " + where(spec) + " is busy (" + message + ")");
        case WireError::Usage: throw usage_error("server " + where(spec) + " rejected the test: " + message);
        default: throw error_from_message(msg, "server " + where(spec));
    }
}

// What the server's ready says that this end needs: the test's cookie and its UDP port. Both ends size
// their streams alike; a server that says otherwise (it could make this end allocate per stream) is
// refused, not followed.
struct ServerReady {
    uint32_t cookie = 0;
    uint16_t udp_port = 0;
};

ServerReady read_ready(const Json& ready, const TestSpec& spec) {
    try {
        ServerReady r;
        r.cookie = checked_integer_field<uint32_t>(ready, "cookie");
        r.udp_port = checked_integer_field<uint16_t>(ready, "udp_port");
        const auto streams = checked_integer_field<uint32_t>(ready.at("spec"), "streams");
        if (streams != spec.streams) {
            throw Error(ErrorKind::Failed, "ready: " + std::to_string(streams) + " streams, but the test has " + std::to_string(spec.streams));
        }
        return r;
    } catch (const std::exception& e) {
        throw Error(ErrorKind::Failed, "server " + where(spec) + ": bad reply to hello: " + e.what());
    }
}

// The client's data streams, set up as the server sets up its own (core/session/stream_setup.hpp): its UDP
// receivers (their port is `udp_port`, for start), its TCP data connections, each opening with its header,
// or a CRR flow's unconnected placeholders, and its UDP senders to the server's receivers.
EnginePlan client_streams(const ControlChannel& ch, const TestSpec& spec, const SocketAddress& server, const Json& ready, uint16_t& udp_port) {
    const ServerReady agreed = read_ready(ready, spec);
    const SocketAddress local = local_address(ch.fd());
    EndStreams streams(spec, End::Client, local, server);
    // The server's datagrams carry the cookie and come from the address we reached it at.
    EnginePlan plan = streams.plan(!spec.iface.empty() ? spec.iface : iface_for_address(local.host()), agreed.cookie);
    udp_port = streams.open_udp_receivers(plan, 0);
    if (spec.protocol == Protocol::Udp) {
        if (streams.layout().sends(End::Client)) streams.open_udp_senders(agreed.udp_port);
    } else if (spec.pattern == TrafficPattern::Crr) {
        // Each flow connects anew per transaction to the server's listener; its stream starts as an
        // unconnected socket.
        plan.connect_to = server;
        plan.connect_to.set_port(ready.contains("rr_port") ? checked_integer_field<uint16_t>(ready, "rr_port") : uint16_t{0});
        if (plan.connect_to.port() == 0) throw Error(ErrorKind::Failed, "server " + where(spec) + ": no listener port for --crr");
        plan.bind = spec.bind;
        for (uint32_t id = 0; id < streams.layout().n; ++id) {
            UniqueFd fd(::socket(server.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
            if (!fd) throw system_error("socket (CRR)", errno);
            streams.add_tcp(DataStream{std::move(fd), id});
        }
    } else {
        for (uint32_t id = 0; id < streams.layout().data_connections(); ++id) {
            const auto prepare = [&](int fd) { streams.prepare_tcp(fd, id); };
            DataStream s{connect_tcp(server, spec.bind, 0, deadline_in(kHandshakeTimeout), prepare), id};
            const auto header = DataHeader{agreed.cookie, id}.encode();
            send_all(s.fd.get(), header.data(), header.size(), deadline_in(kHandshakeTimeout), "data connection header");
            streams.add_tcp(std::move(s));
        }
    }
    streams.place(plan);
    return plan;
}

// The server's report after this end's loop: wait for it within the grace period (shorter when the run
// already failed). An error from the server, or none in time, ends an Ok run as the server says (Limited)
// or as PeerLost.
std::optional<EndReport> await_server_report(ControlChannel& ch, LoopOutcome& outcome, const TestSpec& spec) {
    std::optional<EndReport> theirs = std::move(outcome.peer_report);
    if (theirs || outcome.channel_lost) return theirs;
    const auto limit = deadline_in(outcome.status == RunStatus::Ok        ? std::chrono::milliseconds(kEndGrace)
                                   : outcome.status == RunStatus::Limited ? std::chrono::milliseconds(kResultTimeout)
                                                                          : std::chrono::milliseconds(1000));
    try {
        while (!theirs) {
            auto msg = ch.receive(limit);
            if (!msg) break;
            if (is(*msg, Msg::Result)) theirs = receive_report(ch, *msg, limit);
            if (is(*msg, Msg::Error)) {
                if (outcome.status == RunStatus::Ok) {
                    outcome.status = wire_error_of(*msg) == WireError::Limit ? RunStatus::Limited : RunStatus::PeerLost;
                    const auto text = msg->find("message");
                    outcome.error = "server: " + (text != msg->end() && text->is_string() ? text->get<std::string>() : std::string("error"));
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
    return theirs;
}

}  // namespace

TrafficClient::TrafficClient(TrafficClientOptions options) : options_(std::move(options)) {}

Json TrafficClient::open_test(ControlChannel& ch, const TestSpec& requested, const TestSpec& spec, Json hello, bool* busy) {
    // Once connected the path is known: a GSO datagram must fit its MTU.
    resolve_spec(requested, engine_cores(), udp_path_of(ch.fd()));
    // The server picks its own thread count from its cores unless the user chose one; everything else
    // it gets resolved, so both ends agree on the streams.
    TestSpec wire = spec;
    wire.threads = requested.threads;
    const bool keyed = !options_.key.empty();
    hello["spec"] = wire;
    Json auth = hello;  // with a key the test is asked again, signed, with the same fields
    const std::string client_nonce = keyed ? random_hex(kNonceBytes) : std::string();
    if (keyed) hello["client_nonce"] = client_nonce;
    ch.send(Msg::Hello, std::move(hello), deadline_in(kHandshakeTimeout));
    Json ready = ch.expect(deadline_in(kHandshakeTimeout), "the server's reply to hello from " + where(spec));
    if (busy != nullptr && is(ready, Msg::Error) && wire_error_of(ready) == WireError::Busy) {
        *busy = true;
        return ready;
    }
    throw_if_error(ready, spec);
    if (keyed) {
        if (is(ready, Msg::Ready)) {
            throw Error(ErrorKind::Refused, "server " + where(spec) +
                                                " does not authenticate tests (it was started without --key-file); this run holds a key, "
                                                "so it does not take figures from a server that cannot prove it holds it");
        }
        const auto nonce = ready.find("nonce");
        if (!is(ready, Msg::Challenge) || nonce == ready.end() || !nonce->is_string() ||
            !is_hex(nonce->get_ref<const std::string&>(), 2 * kNonceBytes)) {
            throw Error(ErrorKind::Failed, "server " + where(spec) + ": expected a challenge with a nonce");
        }
        ch.sign_with(test_channel_keys(options_.key, nonce->get<std::string>(), client_nonce, TestRole::Client));
        ch.send(Msg::Auth, std::move(auth), deadline_in(kHandshakeTimeout));
        try {
            ready = ch.expect(deadline_in(kHandshakeTimeout), "the server's reply to the authentication from " + where(spec));
        } catch (const Error& e) {
            if (e.kind() == ErrorKind::Closed) throw;
            throw Error(ErrorKind::Refused, "server " + where(spec) + ": authentication failed: " + e.what());
        }
        throw_if_error(ready, spec);
    }
    if (!is(ready, Msg::Ready)) throw Error(ErrorKind::Failed, "server " + where(spec) + ": unexpected reply");
    return ready;
}

void TrafficClient::check_access(const TestSpec& requested) {
    const TestSpec spec = resolve_spec(requested, engine_cores());
    ControlChannel ch(connect_tcp(resolve_address(spec.host, spec.port), spec.bind, 0, deadline_in(kHandshakeTimeout)));
    bool busy = false;
    open_test(ch, requested, spec, Json::object(), &busy);
    if (!busy) ch.send(Msg::Abort, Json::object(), deadline_in(kNoticeTimeout));
}

RunResult TrafficClient::run(const TestSpec& requested, std::stop_token stop) { return run_live(requested, std::move(stop), {}); }

RunResult TrafficClient::run_live(const TestSpec& requested, std::stop_token stop, const LiveSink& live) {
    const TestSpec spec = resolve_spec(requested, engine_cores());
    check_cpus(spec.client_cpus, online_cpus(), "client");  // the server checks its own
    const bool rr = spec.pattern != TrafficPattern::Stream;
    // A congestion control this kernel does not have is the user's error before anything connects.
    if (spec.protocol == Protocol::Tcp && (rr || StreamLayout::of(spec).sends(End::Client))) check_congestion(spec.socket.congestion);
    // A profile is refused here, before the server is asked, when the table or this host does not allow it.
    // The host id lets a server on this same host leave the profiling to this end's sampler.
    std::optional<EndProfiler> profiler;
    Json extras{{"host_id", options_.host_id.empty() ? host_boot_id() : options_.host_id}};
    if (spec.profile) {
        CategoryTable table = profile::load_category_table(spec.profile_categories);
        extras["profile_table"] = Json{{"table", table}, {"source", table.source}};
        profiler.emplace(spec.profile_hz, std::move(table));
    }
    const SocketAddress server = resolve_address(spec.host, spec.port);
    ControlChannel ch(connect_tcp(server, spec.bind, 0, deadline_in(kHandshakeTimeout)));
    const Json ready = open_test(ch, requested, spec, std::move(extras));
    uint16_t client_udp_port = 0;
    EnginePlan plan = client_streams(ch, spec, server, ready, client_udp_port);

    ch.send(Msg::Start, Json{{"udp_port", client_udp_port}}, deadline_in(kHandshakeTimeout));
    const Json started = ch.expect(deadline_in(kHandshakeTimeout), "the server to start the test");
    throw_if_error(started, spec);

    EndEngine engine(std::move(plan), profiler ? &*profiler : nullptr);
    if (live) engine.watch(live);
    const Timeline tl = make_timeline(spec, std::chrono::steady_clock::now());
    engine.start(tl);
    LoopOutcome outcome = run_end_loop(ch, engine, spec, tl, StreamLayout::of(spec).receives(End::Client), stop);
    EndReport mine = engine.finish(outcome.status, outcome.error);
    cap_intervals(mine);
    const std::optional<EndReport> theirs = await_server_report(ch, outcome, spec);
    if (profiler) {
        // One host for both ends (the lab): the server did not sample, and its threads are counted here.
        std::vector<int32_t> send = mine.send_tids, recv = mine.recv_tids;
        if (theirs && theirs->profile_shared) {
            send.insert(send.end(), theirs->send_tids.begin(), theirs->send_tids.end());
            recv.insert(recv.end(), theirs->recv_tids.begin(), theirs->recv_tids.end());
        }
        mine.measurement.profile = profiler->finish(send, recv);
    }
    if (outcome.status == RunStatus::PeerLost && outcome.error.find(where(spec)) == std::string::npos) {
        outcome.error += " (server " + where(spec) + ")";
    }
    return combine_reports(spec, mine, theirs.value_or(EndReport{}), outcome.status, outcome.error, server.family());
}

}  // namespace nm

#include <catch2/catch.hpp>

#include <vector>

#include "core/workers/stream_layout.hpp"

using nm::Direction;
using nm::End;
using nm::Protocol;
using nm::StreamIds;
using nm::StreamLayout;

namespace {

// Every id's sender, by asking sender_of one id at a time: the oracle for the ranges.
std::vector<End> senders(const StreamLayout& l) {
    std::vector<End> v;
    for (uint32_t id = 0; id < l.total(); ++id) v.push_back(l.sender_of(id));
    return v;
}

// The ranges and sender_of must tell the same story, and every id is sent by exactly one end and received
// by the other.
void check_consistent(const StreamLayout& l) {
    for (uint32_t id = 0; id < l.total(); ++id) {
        const End s = l.sender_of(id);
        const End r = s == End::Client ? End::Server : End::Client;
        CHECK(l.sent_by(s).contains(id));
        CHECK_FALSE(l.sent_by(r).contains(id));
        CHECK(l.received_by(r).contains(id));
        CHECK_FALSE(l.received_by(s).contains(id));
    }
    CHECK(l.sent_by(End::Client).size() + l.sent_by(End::Server).size() == l.total());
}

}  // namespace

TEST_CASE("StreamLayout forward: the client sends ids 0..n-1, the server receives them", "[unit]") {
    for (const Protocol p : {Protocol::Tcp, Protocol::Udp}) {
        const StreamLayout l{p, Direction::Forward, 3};
        CHECK(l.total() == 3);
        CHECK(l.sent_by(End::Client) == StreamIds{0, 3});
        CHECK(l.sent_by(End::Server).empty());
        CHECK(l.received_by(End::Server) == StreamIds{0, 3});
        CHECK(l.received_by(End::Client).empty());
        CHECK(l.sends(End::Client));
        CHECK_FALSE(l.sends(End::Server));
        CHECK(l.receives(End::Server));
        CHECK_FALSE(l.receives(End::Client));
        CHECK(senders(l) == std::vector<End>{End::Client, End::Client, End::Client});
        check_consistent(l);
    }
}

TEST_CASE("StreamLayout reverse: the server sends ids 0..n-1, the client receives them", "[unit]") {
    for (const Protocol p : {Protocol::Tcp, Protocol::Udp}) {
        const StreamLayout l{p, Direction::Reverse, 2};
        CHECK(l.total() == 2);
        CHECK(l.sent_by(End::Server) == StreamIds{0, 2});
        CHECK(l.sent_by(End::Client).empty());
        CHECK(l.received_by(End::Client) == StreamIds{0, 2});
        CHECK_FALSE(l.sends(End::Client));
        CHECK(l.receives(End::Client));
        CHECK(senders(l) == std::vector<End>{End::Server, End::Server});
        check_consistent(l);
    }
}

TEST_CASE("StreamLayout bidir: 2n ids, the client sends the first n and the server the next n", "[unit]") {
    for (const Protocol p : {Protocol::Tcp, Protocol::Udp}) {
        const StreamLayout l{p, Direction::Bidir, 2};
        CHECK(l.total() == 4);
        CHECK(l.sent_by(End::Client) == StreamIds{0, 2});
        CHECK(l.sent_by(End::Server) == StreamIds{2, 4});
        CHECK(l.received_by(End::Client) == StreamIds{2, 4});
        CHECK(l.received_by(End::Server) == StreamIds{0, 2});
        for (const End e : {End::Client, End::Server}) {
            CHECK(l.sends(e));
            CHECK(l.receives(e));
        }
        CHECK(senders(l) == std::vector<End>{End::Client, End::Client, End::Server, End::Server});
        check_consistent(l);
    }
}

TEST_CASE("StreamLayout: TCP opens one data connection per id in every direction, UDP none", "[unit]") {
    for (const Direction d : {Direction::Forward, Direction::Reverse, Direction::Bidir}) {
        const StreamLayout tcp{Protocol::Tcp, d, 5};
        const StreamLayout udp{Protocol::Udp, d, 5};
        CHECK(tcp.data_connections() == tcp.total());
        CHECK(udp.data_connections() == 0);
        CHECK(udp.total() == tcp.total());
        CHECK(udp.sent_by(End::Server) == tcp.sent_by(End::Server));  // the same ids whatever the transport
    }
}

TEST_CASE("StreamLayout::of takes the spec's protocol, direction and streams (0 streams lays out as 1)", "[unit]") {
    nm::TestSpec spec;
    spec.protocol = Protocol::Udp;
    spec.direction = Direction::Bidir;
    spec.streams = 7;
    const auto l = StreamLayout::of(spec);
    CHECK(l.protocol == Protocol::Udp);
    CHECK(l.direction == Direction::Bidir);
    CHECK(l.n == 7);
    CHECK(l.total() == 14);
    spec.streams = 0;
    CHECK(StreamLayout::of(spec).total() == 2);
}

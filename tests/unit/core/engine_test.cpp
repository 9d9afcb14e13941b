// EndEngine with the real workers on AF_UNIX socket pairs (no network): the TCP stream workers move a byte
// count end to end, and a worker that fails makes the end's report failed.
#include <catch2/catch.hpp>

#include <sys/socket.h>

#include "core/base/wait_until.hpp"
#include "core/engine/engine.hpp"

using namespace std::chrono_literals;

namespace {

std::pair<nm::DataStream, nm::DataStream> socket_pair(uint32_t id) {
    int fds[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) == 0);
    return {nm::DataStream{nm::UniqueFd(fds[0]), id}, nm::DataStream{nm::UniqueFd(fds[1]), id}};
}

// A byte-count timeline: the window opens now and never closes by the clock.
nm::Timeline byte_count_timeline() {
    nm::Timeline tl;
    tl.start = tl.window_start = std::chrono::steady_clock::now();
    return tl;
}

/// One UDP sender of 1000-byte writes with UDP_SEGMENT, stream `id`, on an AF_UNIX socket (the kernel
/// refuses UDP_SEGMENT there): the engine's report once the sender gave up, finished as `status`, `error`.
nm::EndReport finish_refused_sender(uint32_t id, nm::RunStatus status, const std::string& error) {
    nm::EnginePlan plan;
    plan.protocol = nm::Protocol::Udp;
    plan.write_size = 1000;
    plan.udp_gso = true;
    plan.stream_count = id + 1;
    auto [a, b] = socket_pair(id);
    std::vector<nm::DataStream> group;
    group.push_back(std::move(a));
    plan.send_groups.push_back(std::move(group));
    nm::EndEngine engine(std::move(plan));
    engine.start(byte_count_timeline());
    nm::wait_until([&] { return engine.senders_done(); }, 10s, "the sender to give up");
    return engine.finish(status, error);
}

}  // namespace

TEST_CASE("EndEngine: TCP stream workers move each stream's byte count and the receiver reads it all", "[unit]") {
    constexpr uint64_t kBytes = 3 << 20;
    nm::EnginePlan send, recv;
    send.protocol = recv.protocol = nm::Protocol::Tcp;
    send.write_size = recv.write_size = 64 * 1024;
    send.bytes_per_stream = recv.bytes_per_stream = kBytes;
    send.send_direction = nm::Direction::Forward;  // the client's
    recv.send_direction = nm::Direction::Reverse;  // the server's: it receives forward streams
    std::vector<nm::DataStream> near, far;
    for (uint32_t id : {4u, 5u, 6u}) {
        auto [a, b] = socket_pair(id);
        near.push_back(std::move(a));
        far.push_back(std::move(b));
    }
    send.send_groups.push_back(std::move(near));  // one sender thread, three streams
    recv.recv_groups.push_back(std::move(far));
    nm::EndEngine sender(std::move(send));
    nm::EndEngine receiver(std::move(recv));
    const auto tl = byte_count_timeline();
    receiver.start(tl);
    sender.start(tl);
    nm::wait_until([&] { return sender.all_done() && receiver.all_done(); }, 20s, "both ends to finish");
    const auto s = sender.finish(nm::RunStatus::Ok, "");
    const auto r = receiver.finish(nm::RunStatus::Ok, "");
    INFO(s.error << " / " << r.error);
    CHECK(s.status == nm::RunStatus::Ok);
    CHECK(r.status == nm::RunStatus::Ok);
    REQUIRE(s.sent.size() == 3);
    REQUIRE(r.received.size() == 3);
    for (size_t i = 0; i < 3; ++i) {
        CHECK(s.sent[i].id == 4 + i);
        CHECK(s.sent[i].bytes == kBytes);
        CHECK(s.sent[i].direction == nm::Direction::Forward);
        CHECK(r.received[i].id == 4 + i);
        CHECK(r.received[i].bytes == kBytes);
        CHECK(r.received[i].direction == nm::Direction::Forward);
    }
    CHECK(s.sent_bytes == 3 * kBytes);
    CHECK(r.received_bytes == 3 * kBytes);
    CHECK(s.send_calls >= 3 * kBytes / (64UL * 1024));  // at most write_size per call
}

TEST_CASE("EndEngine: a worker's error makes an ok end failed, with the worker's message", "[unit]") {
    const auto r = finish_refused_sender(0, nm::RunStatus::Ok, "");
    CHECK(r.status == nm::RunStatus::Failed);
    CHECK_THAT(r.error, Catch::Contains("stream 0") && Catch::Contains("UDP_SEGMENT"));
    // A status the session already decided stays: the worker's error only explains it when none was given.
    const auto s = finish_refused_sender(1, nm::RunStatus::Interrupted, "interrupted");
    CHECK(s.status == nm::RunStatus::Interrupted);
    CHECK(s.error == "interrupted");
}

TEST_CASE("EndEngine: a timed sender's window is exactly window_start to window_end, however late the polls that open and close it", "[unit]") {
    nm::EnginePlan plan;
    plan.protocol = nm::Protocol::Tcp;
    plan.write_size = 64 * 1024;
    plan.send_direction = nm::Direction::Forward;
    auto [a, b] = socket_pair(0);  // nobody reads b: the sender fills the pair and waits, as on a slow path
    std::vector<nm::DataStream> group;
    group.push_back(std::move(a));
    plan.send_groups.push_back(std::move(group));
    nm::EndEngine engine(std::move(plan));
    nm::Timeline tl;
    tl.start = std::chrono::steady_clock::now();
    tl.window_start = tl.start + 50ms;
    // Long enough that the late first poll below still comes inside it on a loaded machine (a poll past
    // the window's end would close it at once).
    tl.window_end = tl.window_start + 1000ms;
    engine.start(tl);
    CHECK(engine.next_due() == tl.window_start);  // a session loop wakes for the window's start
    nm::wait_until([&] { return std::chrono::steady_clock::now() >= tl.window_start + 30ms; }, 5s, "a late first poll");
    engine.poll(std::chrono::steady_clock::now());
    CHECK(engine.next_due() == tl.window_end);  // then for its end
    nm::wait_until([&] { return engine.senders_done(); }, 5s, "the sender's window to end");
    nm::wait_until([&] { return std::chrono::steady_clock::now() >= tl.window_end + 100ms; }, 5s, "a late last poll");
    engine.poll(std::chrono::steady_clock::now());
    CHECK(engine.next_due() == nm::TimePoint::max());
    const auto r = engine.finish(nm::RunStatus::Ok, "");
    INFO(r.error);
    CHECK(r.status == nm::RunStatus::Ok);
    CHECK(r.measurement.duration_s == Approx(1.0).margin(1e-9));
}

TEST_CASE("EndEngine: a receive-only end's window ends at its last byte, not when it sees the end of data", "[unit]") {
    constexpr size_t kBytes = 1 << 20;
    nm::EnginePlan plan;
    plan.protocol = nm::Protocol::Tcp;
    plan.write_size = 64 * 1024;
    plan.send_direction = nm::Direction::Reverse;
    auto [a, b] = socket_pair(0);
    std::vector<nm::DataStream> group;
    group.push_back(std::move(b));
    plan.recv_groups.push_back(std::move(group));
    nm::EndEngine engine(std::move(plan));
    const auto tl = byte_count_timeline();
    engine.start(tl);
    engine.poll(std::chrono::steady_clock::now());
    CHECK(engine.next_due() == nm::TimePoint::max());  // nothing due by the clock: the peer's end of data ends it
    // The peer writes its bytes, then keeps the connection open a while before it closes (its end of data).
    const std::vector<char> chunk(64UL * 1024, 'x');
    size_t written = 0;
    const int peer_fd = a.fd.get();  // a structured binding cannot be captured by the lambda (clang 14)
    nm::wait_until(
        [&] {
            const ssize_t w = ::send(peer_fd, chunk.data(), std::min(chunk.size(), kBytes - written), MSG_NOSIGNAL);
            if (w > 0) written += static_cast<size_t>(w);
            engine.poll(std::chrono::steady_clock::now());
            return written == kBytes;
        },
        10s, "the bytes to be written");
    const auto last_write = std::chrono::steady_clock::now();
    nm::wait_until(
        [&] {
            engine.poll(std::chrono::steady_clock::now());
            return std::chrono::steady_clock::now() >= last_write + 300ms;
        },
        5s, "the quiet before the peer closes");
    a.fd = nm::UniqueFd();
    nm::wait_until(
        [&] {
            engine.poll(std::chrono::steady_clock::now());
            return engine.receivers_done();
        },
        10s, "the receiver to see the end of data");
    engine.poll(std::chrono::steady_clock::now());
    const auto r = engine.finish(nm::RunStatus::Ok, "");
    INFO(r.error);
    CHECK(r.status == nm::RunStatus::Ok);
    CHECK(r.received_bytes == kBytes);
    const double to_last_write = std::chrono::duration<double>(last_write - tl.window_start).count();
    CHECK(r.measurement.duration_s > 0);
    CHECK(r.measurement.duration_s <= to_last_write + 0.1);  // the 300 ms of quiet is not in it
}

// `--json-stream`'s writer against a pipe nobody reads, and one whose reader has gone: it never blocks,
// counts what it could not deliver, and never throws.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <string>

#include "core/base/unique_fd.hpp"
#include "matrix/sweep_stream.hpp"

namespace {

struct Pipe {
    nm::UniqueFd read, write;
    Pipe() {
        int fds[2];
        REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
        read = nm::UniqueFd(fds[0]);
        write = nm::UniqueFd(fds[1]);
        REQUIRE(::fcntl(read.get(), F_SETPIPE_SZ, 4096) > 0);
    }
};

nm::Json event(size_t pad) { return nm::Json{{"event", "note"}, {"text", std::string(pad, 'x')}}; }

}  // namespace

TEST_CASE("JsonLines: a reader that stops reading costs events, counted, and no write waits", "[unit]") {
    Pipe p;
    nm::JsonLines lines(p.write.get(), 4);
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 100; ++i) lines.write(event(1000));
    lines.drain(std::chrono::steady_clock::now() + std::chrono::milliseconds(100));
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
    const auto s = lines.stats();
    CHECK(s.queue_lines == 4);
    CHECK(s.written_lines >= 3);  // a page holds about four of them
    CHECK(s.unwritten_lines >= 1);
    CHECK(s.unwritten_lines <= 4);
    CHECK(s.written_lines + s.unwritten_lines + s.dropped_events == 100);
    CHECK_FALSE(s.output_closed);
    // The pipe's own description is left blocking: only the writer's reopened one is not.
    CHECK((::fcntl(p.write.get(), F_GETFL) & O_NONBLOCK) == 0);
    CHECK_THAT(nm::describe_stream_losses(s), Catch::Contains("the reader did not keep up"));

    // The reader reads everything: what was queued follows, whole lines only.
    std::string got;
    char buf[65536];
    for (int round = 0; round < 20 && lines.stats().unwritten_lines > 0; ++round) {
        const ssize_t n = ::read(p.read.get(), buf, sizeof buf);
        if (n > 0) got.append(buf, static_cast<size_t>(n));
        lines.drain(std::chrono::steady_clock::now() + std::chrono::milliseconds(50));
    }
    REQUIRE(::fcntl(p.read.get(), F_SETFL, O_NONBLOCK) == 0);
    for (ssize_t n; (n = ::read(p.read.get(), buf, sizeof buf)) > 0;) got.append(buf, static_cast<size_t>(n));
    CHECK(lines.stats().unwritten_lines == 0);
    CHECK(static_cast<uint64_t>(std::count(got.begin(), got.end(), '\n')) == lines.stats().written_lines);
}

TEST_CASE("JsonLines: a reader that goes away closes the stream, nothing is thrown, later events are counted", "[unit]") {
    // As the CLI does (cli/main.cpp): a write to a pipe without a reader fails with EPIPE instead.
    std::signal(SIGPIPE, SIG_IGN);
    Pipe p;
    nm::JsonLines lines(p.write.get(), 8);
    lines.write(event(10));
    p.read.reset();
    CHECK_NOTHROW(lines.write(event(10)));
    CHECK_NOTHROW(lines.write(event(10)));
    const auto s = lines.stats();
    CHECK(s.output_closed);
    CHECK(s.written_lines == 1);
    CHECK(s.dropped_events + s.unwritten_lines == 2);
    CHECK_THAT(nm::describe_stream_losses(s), Catch::Contains("the reader closed the stream"));
}

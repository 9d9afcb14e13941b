// `sweep --json-stream` to a reader that stops reading (review finding 12): the sweep never waits for it.
// A pipe the test holds open and never reads (shrunk to one page, so a few events fill it), then SIGTERM:
// the sweep must exit within seconds with the interface put back, as ip and ethtool see it, and the
// results must say what the stream lost.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "core/base/unique_fd.hpp"
#include "core/base/wait_until.hpp"
#include "matrix/results_store.hpp"
#include "tests/support/background.hpp"
#include "tests/support/command.hpp"
#include "tests/support/ends_as_it_began.hpp"
#include "tests/support/oracles.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"
#include "tests/support/served_lab.hpp"
#include "tests/support/temp_dir.hpp"

using nm::test::Background;
using nm::test::nicmatrix_binary;

TEST_CASE_METHOD(nm::test::ServedLab,
                 "sweep --json-stream to a pipe nobody reads: SIGTERM still ends it within seconds, the interface restored, the losses recorded",
                 "[integration]") {
    const nm::test::EndsAsItBegan unchanged(a);

    // Four cells of 3 s with an interval every 0.2 s: events keep coming while the first cell runs.
    const std::string cfg = dir.file("stream.json");
    std::ofstream(cfg) << R"({"name": "stream", "offloads": [{"name": "off", "features": {"tso": "off", "sg": "off", "gro": "on"}}],
      "mtu": [1400, 1300, 1420, 1320], "traffic": [{"name": "tcp-p1", "streams": 1}], "duration_s": 3, "omit_s": 0.2,
      "repetitions": 1, "order": "sequential", "cooldown_s": 0, "apply_to": "local", "interference": {"max_wait_s": 0}})";

    // The reader: a FIFO this test opens for reading and writing (so the sweep's writes find a reader and
    // do not fail with EPIPE) and never reads; one page of buffer.
    const std::string fifo = dir.file("stream.fifo");
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    nm::UniqueFd reader(::open(fifo.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC));
    REQUIRE(reader);
    REQUIRE(::fcntl(reader.get(), F_SETPIPE_SZ, 4096) > 0);

    const std::string out = dir.file("r.json");
    Background sweep("ip netns exec " + a.netns + " " + nicmatrix_binary() + " sweep " + cfg + " --iface " + a.ifname + " --peer " +
                         nm::strip_prefix(lab.server().ipv4) + " -o " + out + " --journal " + dir.file("j.json") +
                         " --json-stream --json-stream-queue 8 > " + fifo,
                     dir.file("sweep.log"), std::chrono::seconds(120));
    // The first cell recorded: its "cell" event (the whole result, longer than the pipe's one page) is
    // written next, so a writer that blocks is stuck from here on.
    const auto cells_recorded = [&] {
        try {
            std::ifstream in(out);
            return nlohmann::json::parse(in).at("cells").size();
        } catch (const std::exception&) {
            return size_t{0};  // not written yet
        }
    };
    const auto queued = [&] {
        int n = 0;
        return ::ioctl(reader.get(), FIONREAD, &n) == 0 ? n : 0;
    };
    nm::wait_until([&] { return cells_recorded() >= 1 && queued() > 0; }, std::chrono::seconds(30), "the first cell recorded");
    REQUIRE(::kill(sweep.pid(), SIGTERM) == 0);
    const auto t0 = std::chrono::steady_clock::now();
    const auto status = sweep.wait(std::chrono::seconds(10));
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    INFO(sweep.output());
    REQUIRE(status);  // a95a16e: still blocked in write() to the pipe after 10 s, the interface at MTU 1400
    CHECK(*status == 1);
    CHECK(took < 8);
    CHECK_THAT(sweep.output(), Catch::Contains("sweep interrupted") && Catch::Contains("interfaces restored"));
    CHECK_THAT(sweep.output(), Catch::Contains("--json-stream:") && Catch::Contains("the reader did not keep up"));
    unchanged.check();

    // The results say what the stream lost: read as plain JSON, and through the codec.
    std::ifstream in(out);
    const auto doc = nlohmann::json::parse(in);
    const auto& js = doc.at("run").at("json_stream");
    INFO(js.dump());
    CHECK(js.at("queue_lines") == 8);
    CHECK_FALSE(js.at("output_closed").get<bool>());
    CHECK(js.at("dropped_events").get<uint64_t>() + js.at("unwritten_lines").get<uint64_t>() >= 1);
    const auto results = nm::load_results(out);
    REQUIRE(results.run.json_stream);
    CHECK(results.run.json_stream->queue_lines == 8);
}

TEST_CASE_METHOD(nm::test::ServedLab, "sweep --json-stream whose reader goes away: the sweep finishes (exit 0), says so, and the results record it",
                 "[integration]") {
    const nm::test::EndsAsItBegan unchanged(a);
    const std::string cfg = dir.file("stream.json");
    std::ofstream(cfg) << R"({"name": "stream", "offloads": [{"name": "off", "features": {"tso": "off", "gro": "on"}}],
      "mtu": [1400, 1300], "traffic": [{"name": "tcp-p1", "streams": 1}], "duration_s": 1, "omit_s": 0.2,
      "repetitions": 1, "order": "sequential", "cooldown_s": 0, "apply_to": "local", "interference": {"max_wait_s": 0}})";
    const std::string out = dir.file("r.json");
    // head -1 reads the start line and exits: every later write finds no reader (EPIPE).
    const auto r = nm::test::run_command("bash -c 'ip netns exec " + a.netns + " " + nicmatrix_binary() + " sweep " + cfg + " --iface " + a.ifname +
                                             " --peer " + nm::strip_prefix(lab.server().ipv4) + " -o " + out + " --journal " + dir.file("j.json") +
                                             " --json-stream 2>" + dir.file("err") + " | head -1; exit ${PIPESTATUS[0]}'",
                                         std::chrono::seconds(90));
    INFO(r.output);
    CHECK(r.exit_status == 0);
    CHECK_THAT(r.output, Catch::Contains("\"event\":\"start\""));
    CHECK_THAT(nm::test::run_command("cat " + dir.file("err")).output, Catch::Contains("the reader closed the stream"));
    unchanged.check();
    const auto results = nm::load_results(out);
    CHECK(results.cells.size() == 2);
    REQUIRE(results.run.json_stream);
    CHECK(results.run.json_stream->output_closed);
    CHECK(results.run.json_stream->dropped_events >= 1);
}

// The TCP sender's default write size (core/workers/tcp_write_size.hpp) on a lab, read from outside the engine:
// strace sees the client's send() sizes, the MSS comes from the MTU and the namespace's timestamps
// sysctl, and tcpdump on the receiving side sees where the data segments shorter than a full one end.
#include <catch2/catch.hpp>

#include <charconv>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/base/error.hpp"
#include "core/base/wait_until.hpp"
#include "tests/support/command.hpp"
#include "tests/support/lab_server.hpp"
#include "tests/support/require.hpp"
#include "tests/support/scoped_lab.hpp"
#include "tests/support/temp_dir.hpp"

using nm::test::LabServer;
using nm::test::run_in_netns;

namespace {

/// tcpdump on the server's veth, from construction to stop(), of the TCP segments to `port` shorter
/// than a full segment of a 1500-byte MTU (headers only). The capture is running when the constructor
/// returns; it is stopped and its files removed on scope exit. `-Z root`: Debian's tcpdump would otherwise
/// drop to its own user, which cannot write into the scratch directory.
class RuntCapture {
public:
    RuntCapture(const nm::test::ScopedLab& lab, uint16_t port)
        : pcap_(dir_.file("runts.pcap")), log_(dir_.file("tcpdump.log")), pid_file_(dir_.file("tcpdump.pid")) {
        const auto r = run_in_netns(lab.server().netns, "sh -c 'timeout 60 tcpdump -Z root -i " + lab.server().ifname + " -nn -S -s 96 -U -w " +
                                                            pcap_ + " \"tcp dst port " + std::to_string(port) + " and less 1499\" >" + log_ +
                                                            " 2>&1 & echo $! >" + pid_file_ + "'");
        REQUIRE(r.exit_status == 0);
        nm::wait_until([&] { return nm::test::run_command("grep -q 'listening on' " + log_).exit_status == 0; }, std::chrono::seconds(10),
                       "tcpdump listening");
    }
    ~RuntCapture() {
        try {
            end();
        } catch (const std::exception&) {  // a tcpdump that would not end: its timeout 60 ends it
        }
    }
    RuntCapture(const RuntCapture&) = delete;
    RuntCapture& operator=(const RuntCapture&) = delete;

    /// Ends the capture and returns it as `tcpdump -r -nn -S` prints it.
    std::string stop() {
        end();
        return nm::test::run_command("tcpdump -r " + pcap_ + " -nn -S 2>/dev/null").output;
    }

private:
    /// Stops tcpdump (once) and waits, bounded, until it has written its file and ended.
    void end() {
        if (stopped_) return;
        stopped_ = true;
        const std::string pid = "$(cat " + pid_file_ + ")";
        nm::test::run_command("kill -INT " + pid);
        nm::wait_until([&] { return nm::test::run_command("kill -0 " + pid).exit_status != 0; }, std::chrono::seconds(10), "tcpdump ending");
    }

    nm::test::TempDir dir_;  // the capture's files, removed with it
    std::string pcap_, log_, pid_file_;
    bool stopped_ = false;
};

/// A TCP data segment as `tcpdump -nn -S` prints it: "... IP SRC > DST: Flags [...], seq FIRST:END, ...
/// length N". Parsed by hand: std::regex took 6 s of CPU for the second of 1000-byte writes.
struct Segment {
    std::string_view flow;  ///< SRC (address.port)
    uint32_t first = 0, end = 0, length = 0;
};

std::optional<Segment> parse_segment(std::string_view line) {
    const auto number = [&](size_t& at, uint32_t& out) {
        const auto [p, ec] = std::from_chars(line.data() + at, line.data() + line.size(), out);
        at = static_cast<size_t>(p - line.data());
        return ec == std::errc();
    };
    const size_t ip = line.find(" IP ");
    const size_t to = ip == std::string_view::npos ? ip : line.find(" > ", ip);
    const size_t seq = to == std::string_view::npos ? to : line.find("], seq ", to);
    const size_t length = line.rfind(" length ");
    if (seq == std::string_view::npos || length == std::string_view::npos || length < seq) return std::nullopt;
    Segment s;
    s.flow = line.substr(ip + 4, to - ip - 4);
    size_t at = seq + 7;  // past "], seq "
    if (!number(at, s.first) || at >= line.size() || line[at] != ':' || !number(++at, s.end) || at >= line.size() || line[at] != ',')
        return std::nullopt;
    at = length + 8;  // past " length "
    if (!number(at, s.length)) return std::nullopt;
    return s;
}

/// The short data segments of the capture that a write of `write_size` bytes left at its end: on the data
/// connection (the one whose first payload is the engine's 12-byte stream header), a segment that ends a
/// whole number of writes past the header and starts a whole number of full segments (`mss`) past the
/// start of that write. A receiver too slow to keep its window open (a loaded machine) makes the sender
/// split a segment where the window ends (a window probe), and the rest of it may end where a write did:
/// that rest starts off the write's grid of full segments, and is not counted.
size_t write_tail_runts(const std::string& capture, uint64_t write_size, uint32_t mss) {
    std::map<std::string_view, uint32_t> data_start;  // per flow: the sequence number after the stream header
    std::set<std::string_view> seen;
    size_t n = 0;
    std::string_view rest = capture;
    while (!rest.empty()) {
        const size_t eol = rest.find('\n');
        const std::string_view line = rest.substr(0, eol);
        rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 1);
        const auto seg = parse_segment(line);
        if (!seg || seg->length == 0) continue;
        if (seen.insert(seg->flow).second) {
            if (seg->length == 12) data_start[seg->flow] = seg->end;
            continue;
        }
        const auto it = data_start.find(seg->flow);
        if (it == data_start.end()) continue;
        const uint64_t end_offset = static_cast<uint32_t>(seg->end - it->second);
        const uint64_t start_offset = static_cast<uint32_t>(seg->first - it->second);
        if (end_offset == 0 || end_offset % write_size != 0) continue;
        const uint64_t write_start = end_offset - write_size;
        if (start_offset >= write_start && (start_offset - write_start) % mss == 0) ++n;
    }
    return n;
}

nlohmann::json run_json(const nm::test::ScopedLab& lab, const LabServer& server, const std::string& args, const std::string& prefix = "") {
    const auto r = run_in_netns(lab.client().netns,
                                prefix + nm::test::nicmatrix_binary() + " run -c " + nm::strip_prefix(lab.server().ipv4) + " -p " +
                                    std::to_string(server.port()) + " -i 0 --json " + args,
                                std::chrono::seconds(30));
    INFO(r.output.substr(0, 2000));
    REQUIRE(r.exit_status == 0);
    return nlohmann::json::parse(r.output);
}

/// The full segment's payload on the lab's 1500-byte link: IPv4 and TCP headers off, and the timestamp
/// option when the client's namespace uses it (the sysctl, read from outside the engine).
uint32_t expected_mss(const nm::test::ScopedLab& lab) {
    const auto ts = run_in_netns(lab.client().netns, "sysctl -n net.ipv4.tcp_timestamps");
    REQUIRE(ts.exit_status == 0);
    return 1500 - 20 - 20 - (std::stoi(ts.output) != 0 ? 12 : 0);
}

}  // namespace

TEST_CASE("Without -l a TCP sender writes whole send units: strace sees sends of 90 full segments, the result says so", "[integration]") {
    nm::test::require_net_admin();
    nm::test::require_tool("strace");
    nm::test::ScopedLab lab;
    LabServer server(lab.server().netns);
    const uint32_t mss = expected_mss(lab);
    const uint32_t write = 90 * mss;  // two send units of 45 segments each (a 64 KiB GSO packet holds 45)
    const nm::test::TempDir dir;
    const std::string trace = dir.file("sends.txt");
    const auto j = run_json(lab, server, "-t 1", "strace -f -qq -e trace=sendto -e signal=none -o " + trace + " ");
    const auto traced = nm::test::run_command("cat " + trace).output;
    CHECK(j.at("spec").at("write_size") == 0);
    CHECK(j.at("socket").at("mss") == mss);
    CHECK(j.at("socket").at("write_size") == write);
    CHECK(j.at("ends").at("sender").at("socket").at("write_size") == write);
    CHECK(j.at("ends").at("receiver").at("socket").at("write_size") == 0);
    // Every data send asks for a whole write, or for the rest of one a short send left: the writes end on
    // whole units of the stream.
    const std::regex send_call(R"(sendto\((\d+), .*, (\d+), MSG_DONTWAIT\|MSG_NOSIGNAL, NULL, 0\) = (-?\d+))");
    std::istringstream in(traced);
    size_t whole = 0, rest = 0;
    std::map<std::string, uint64_t> due;  // per socket: what the last short send left
    for (std::string line; std::getline(in, line);) {
        std::smatch m;
        if (!std::regex_search(line, m, send_call) || std::stoull(m[2]) < 4096) continue;
        INFO(line);
        const uint64_t asked = std::stoull(m[2]);
        const long long sent = std::stoll(m[3]);
        uint64_t& left = due[m[1]];
        if (left > 0) {
            CHECK(asked == left);
            ++rest;
        } else {
            CHECK(asked == write);
            ++whole;
        }
        if (sent > 0) left = asked - static_cast<uint64_t>(sent);
    }
    INFO("sends finishing a short one: " << rest);
    CHECK(whole > 100);
}

TEST_CASE("Whole-unit writes leave no short segment at their ends, -l 1000 with -N thousands (tcpdump)", "[integration]") {
    nm::test::require_net_admin();
    nm::test::require_tool("tcpdump");
    nm::test::ScopedLab lab;
    // The sender's segments one by one on the wire: no TSO or GSO to carry a short one inside a big packet.
    const auto off = run_in_netns(lab.client().netns, "ethtool -K " + lab.client().ifname + " tso off gso off");
    INFO(off.output);
    REQUIRE(off.exit_status == 0);
    LabServer server(lab.server().netns);
    {
        RuntCapture capture(lab, server.port());
        const auto j = run_json(lab, server, "-t 1");
        const auto write = j.at("socket").at("write_size").get<uint64_t>();
        const auto mss = j.at("socket").at("mss").get<uint32_t>();
        const std::string seen = capture.stop();
        INFO(seen.substr(0, 3000));
        REQUIRE(write > 0);
        REQUIRE(mss > 0);
        CHECK(j.at("bytes").get<uint64_t>() > 10'000'000);
        CHECK(write_tail_runts(seen, write, mss) == 0);
    }
    {
        // The oracle sees them when there are some: 1000-byte writes, each pushed at once.
        RuntCapture capture(lab, server.port());
        const auto j = run_json(lab, server, "-t 1 -l 1000 -N");
        CHECK(write_tail_runts(capture.stop(), 1000, j.at("socket").at("mss").get<uint32_t>()) > 1000);
    }
}

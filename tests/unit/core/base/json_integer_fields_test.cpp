// Every integer a reader takes from outside goes through checked_integer(): the oracle is the documents
// themselves. Each integer in a results file, a sweep config, a qdisc request and the journal's link state
// is replaced in turn by a float (7.5); reading the document must then fail, or read that field back as it
// was (a field derived on read). A reader that used nlohmann's get<T>() would take 7 without a word, and a
// float out of range (1e54, what the fuzzer sent) would be undefined behaviour.
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "core/base/error.hpp"
#include "core/device/device_codec.hpp"
#include "core/device/tuning_codec.hpp"
#include "core/traffic/rfc2544_codec.hpp"
#include "ethtool_ctl/journal_codec.hpp"
#include "matrix/model/results_codec.hpp"
#include "matrix/model/sweep_codec.hpp"

using nm::Json;

namespace {

Json read_json(const std::string& relative) {
    std::ifstream in(std::string(NM_SOURCE_DIR) + "/" + relative);
    REQUIRE(in);
    std::stringstream text;
    text << in.rdbuf();
    return Json::parse(text.str());
}

// The integer leaves of `doc`, one per shape: array indices count as one ("/cells/*/runs/*/bytes"), so a
// file of many cells costs one trial per field, not one per number.
std::vector<Json::json_pointer> integer_fields(const Json& doc) {
    std::vector<Json::json_pointer> out;
    std::set<std::string> shapes;
    std::function<void(const Json&, const Json::json_pointer&, const std::string&)> walk = [&](const Json& v, const Json::json_pointer& at,
                                                                                               const std::string& shape) {
        if (v.is_object()) {
            for (const auto& [key, child] : v.items()) walk(child, at / key, shape + "/" + key);
        } else if (v.is_array()) {
            for (size_t i = 0; i < v.size(); ++i) walk(v[i], at / i, shape + "/*");
        } else if (v.is_number_integer() && shapes.insert(shape).second) {
            out.push_back(at);
        }
    };
    walk(doc, Json::json_pointer(), "");
    return out;
}

// The integer fields of `doc` that `read` (document -> what was read, written back) takes a float for.
std::vector<std::string> fields_taking_a_float(const Json& doc, const std::function<Json(const Json&)>& read) {
    std::vector<std::string> taken;
    const auto fields = integer_fields(doc);
    REQUIRE(!fields.empty());
    for (const auto& at : fields) {
        Json poisoned = doc;
        poisoned[at] = doc[at].get<int64_t>() == 7 ? 8.5 : 7.5;
        try {
            const Json back = read(poisoned);
            // A float field keeps the float; a field derived on read comes back as it was: only an
            // integer that is not the one the document had was taken from the float.
            if (back.contains(at) && back[at].is_number_integer() && back[at] != doc[at]) taken.push_back(at.to_string());
        } catch (const nm::Error&) {
        } catch (const Json::exception&) {}
    }
    return taken;
}

const std::vector<std::string> kNone;

template <typename T>
Json round_trip(const Json& j) {
    return Json(j.get<T>());
}

}  // namespace

TEST_CASE("A results file refuses a float wherever it has an integer", "[unit]") {
    // The first cells of each example cover its kinds of traffic (rr: TCP_RR, bursts, UDP_RR, CRR).
    const std::vector<std::pair<const char*, size_t>> files = {
        {"tests/fixtures/results/fake-lab.json", 0}, {"results/queues-steering-lab.json", 0}, {"results/example-gro-lab.json", 0},
        {"results/example-rr-lab.json", 4},          {"results/example-profile-lab.json", 2}, {"results/example-bridge-frames-lab.json", 1},
        {"results/example-iperf3-lab.json", 0}};
    for (const auto& [file, cells] : files) {
        INFO(file);
        Json doc = read_json(file);
        if (cells != 0 && doc.at("cells").size() > cells)
            doc["cells"].erase(doc["cells"].begin() + static_cast<std::ptrdiff_t>(cells), doc["cells"].end());
        REQUIRE_NOTHROW(round_trip<nm::ResultsFile>(doc));
        CHECK(fields_taking_a_float(doc, round_trip<nm::ResultsFile>) == kNone);
    }
}

TEST_CASE("A sweep config refuses a float wherever it has an integer", "[unit]") {
    for (const char* file :
         {"configs/offload-mtu.json", "configs/udp-pps.json", "configs/rr-latency.json", "configs/queues-steering.json", "configs/napi.json"}) {
        INFO(file);
        const Json doc = read_json(file);
        REQUIRE_NOTHROW(round_trip<nm::SweepConfig>(doc));
        CHECK(fields_taking_a_float(doc, round_trip<nm::SweepConfig>) == kNone);
    }
}

TEST_CASE("Settings from a client refuse a float wherever they have an integer: the qdisc, the tuning, the link state", "[unit]") {
    nm::QdiscSpec tbf;
    tbf.kind = "tbf";
    tbf.limit = 1000;
    tbf.rate_bps = 1000000000;
    tbf.burst_bytes = 65536;
    tbf.latency_ms = 2.5;
    tbf.default_class = 10;
    const Json qdisc = tbf;
    CHECK(fields_taking_a_float(qdisc, round_trip<nm::QdiscSpec>) == kNone);

    nm::QdiscState state;
    state.kind = "htb";
    state.params = {{"default_class", 16}, {"limit", 100}};
    const Json state_json = state;
    CHECK(fields_taking_a_float(state_json, round_trip<nm::QdiscState>) == kNone);

    nm::TuningRequest tuning;
    tuning.channels = {{"combined", 2}};
    tuning.rings = {{"rx", 512}};
    tuning.coalesce = {{"rx-usecs", 8}};
    tuning.napi = {{"gro_flush_timeout", 20000}};
    tuning.qdisc = tbf;
    const Json tuning_json = tuning;
    CHECK(fields_taking_a_float(tuning_json, round_trip<nm::TuningRequest>) == kNone);

    nm::LinkSettings settings;
    settings.mtu = 9000;
    settings.features = {{"tso", false}};
    settings.tuning = tuning;
    const Json settings_json = settings;
    CHECK(fields_taking_a_float(settings_json, round_trip<nm::LinkSettings>) == kNone);

    // What an agent answers an apply with.
    nm::ApplyReport report;
    report.ifname = "nm-b";
    report.mtu = nm::MtuChange{9000, 1500, 9000, nm::SettingOutcome::Applied};
    report.mtu_after = 9000;
    const Json report_json = report;
    CHECK(fields_taking_a_float(report_json, round_trip<nm::ApplyReport>) == kNone);
}

TEST_CASE("A journal entry refuses a float wherever it has an integer (restore puts back what it reads)", "[unit]") {
    nm::JournalEntry entry;
    entry.owner = {4242, 123456, "0b1d", "nicmatrix sweep"};
    entry.where = "nm-lab";
    nm::LinkState& s = entry.original;
    s.name = "nm-a";
    s.identity.netns_dev = 4;
    s.identity.netns_ino = 4026531840;
    s.identity.ifindex = 12;
    s.speed_mbps = 1000;
    s.mtu = 1500;
    s.mtu_min = 68;
    s.mtu_max = 65535;
    s.features = {{"tx-tcp-segmentation", {true, true, false}}};
    s.feature_order = {"tx-tcp-segmentation"};
    s.rings = {{"rx", 512}};
    s.coalesce = {{"rx_usecs", 8}};
    s.channels = {{"combined_count", 2}};
    s.tuning.channels = {{"combined", 2}};
    s.tuning.channels_max = {{"combined", 2}};
    s.tuning.rings = {{"rx", 512}};
    s.tuning.coalesce = {{"rx-usecs", 8}};
    s.tuning.napi = {{"gro_flush_timeout", 20000}, {"napi_defer_hard_irqs", 2}};
    s.tuning.qdisc = nm::QdiscState{"tbf", 0x80010000, {{"limit", 100}}};
    s.counters.rx_packets = 11;
    s.counters.tx_bytes = 12;
    const Json doc = entry;
    REQUIRE_NOTHROW(round_trip<nm::JournalEntry>(doc));
    CHECK(fields_taking_a_float(doc, round_trip<nm::JournalEntry>) == kNone);
}

TEST_CASE("An RFC 2544 table refuses a float wherever it has an integer (a results file's rfc2544 cell)", "[unit]") {
    // The example's cells (results/example-bridge-frames-lab.json) leave some integers out: veth reports
    // no coalescing, no row has a payload mix. The table is made here with every integer set.
    nm::Rfc2544Result result;
    result.spec.frames = {"64", "imix"};
    result.spec.max_trials = 12;
    result.spec.streams = 2;
    result.line_rate_bps = 1e9;
    result.line_rate_source = "configured";
    nm::FrameRow row;
    row.frame = "imix";
    row.payload_mix = {{18, 7}, {548, 4}, {1472, 1}};
    row.found = true;
    row.trials = 9;
    const nm::TrialRecord trial{1000, 990, 9900, 9899, 0.01, true};
    row.confirmation = trial;
    row.history = {trial, trial};
    result.rows = {row};
    result.interfaces = {{"nm-lab-a", "nm-a", {{"rx_usecs", 8}}}};
    const Json doc = result;
    REQUIRE_NOTHROW(round_trip<nm::Rfc2544Result>(doc));
    CHECK(fields_taking_a_float(doc, round_trip<nm::Rfc2544Result>) == kNone);
}

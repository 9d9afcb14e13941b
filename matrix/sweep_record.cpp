#include "matrix/sweep_record.hpp"

#include <algorithm>
#include <ctime>

#include "core/base/version.hpp"
#include "core/host/host_codec.hpp"
#include "matrix/model/results_codec.hpp"
#include "matrix/model/sweep_codec.hpp"
#include "matrix/results_store.hpp"
#include "matrix/runner.hpp"

namespace nm {

std::string utc_now() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::string settings_fingerprint(const CellResult& r) {
    return Json{{"local", r.applied_local ? Json(*r.applied_local) : Json()},
                {"remote", r.applied_remote ? Json(*r.applied_remote) : Json()},
                {"dut", r.applied_dut},
                {"traffic", r.spec.traffic}}
        .dump();
}

SweepRecord::SweepRecord(const SweepPlan& plan, const SweepOptions& options, SweepObserver* observer, ResultsFile& results)
    : plan_(plan), options_(options), observer_(observer), results_(results) {}

void SweepRecord::note(const std::string& text) {
    if (observer_) observer_->on_note(text);
}

void SweepRecord::begin(std::optional<uint64_t> seed, const HostInfo& local, const HostInfo& remote) {
    auto& r = results_;
    if (options_.resume) {
        r = *options_.resume;
        r.run.finished.clear();
        // The file's tool is the first run's; the build that continues it (perhaps another) is recorded here.
        r.run.resumed.push_back(ResumeInfo{utc_now(), options_.command, ToolInfo{.version = options_.tool_version, .commit = options_.tool_commit}});
        const std::string began = build_label(r.tool.version, r.tool.commit), now = build_label(options_.tool_version, options_.tool_commit);
        if (began != now) {
            note("the file was begun by nicmatrix " + began + " and is continued by " + now +
                 ": its cells will hold figures of two builds (run.resumed records which)");
        }
        // A resumed cell keeps its spec from the file; its indices come from the config.
        for (auto& c : r.cells) {
            const size_t i = plan_.index_of(c.spec.key);
            if (i < plan_.cells.size()) c.spec = plan_.cells[i];
            if (c.status != CellStatus::Infeasible && c.status != CellStatus::Duplicate) measured_.emplace(settings_fingerprint(c), c.spec.key);
        }
    } else {
        r.tool.version = options_.tool_version;
        r.tool.commit = options_.tool_commit;
        r.run.started = utc_now();
        r.run.command = options_.command;
        r.run.config_file = options_.config_file;
        r.run.config = plan_.config;
    }
    r.run.order.mode = plan_.config.order;
    r.run.order.seed.reset();
    if (plan_.config.order == SweepOrder::Shuffled) r.run.order.seed = seed;
    if (options_.time_budget_s) r.run.time_budget_s = options_.time_budget_s;
    r.run.budget_reached = false;
    r.local = local;
    r.remote = remote;
    // A peer agent of another build measures the server's end with other code than this sweep's client.
    if (!r.remote.tool.version.empty()) {
        const std::string peer = build_label(r.remote.tool.version, r.remote.tool.commit),
                          ours = build_label(options_.tool_version, options_.tool_commit);
        if (peer != ours) {
            note("the peer's agent is nicmatrix " + peer + " and this sweep " + ours +
                 ": the two ends' figures come from different builds (hosts.remote.tool records the agent's)");
        }
    }
}

CellResult* SweepRecord::recorded(const std::string& key) {
    auto& cells = results_.cells;
    const auto it = std::find_if(cells.begin(), cells.end(), [&](const CellResult& c) { return c.spec.key == key; });
    return it == cells.end() ? nullptr : &*it;
}

const CellResult* SweepRecord::recorded(const std::string& key) const {
    const auto& cells = results_.cells;
    const auto it = std::find_if(cells.begin(), cells.end(), [&](const CellResult& c) { return c.spec.key == key; });
    return it == cells.end() ? nullptr : &*it;
}

void SweepRecord::record(CellResult result) {
    auto& cells = results_.cells;
    const size_t at = plan_.index_of(result.spec.key);
    const auto pos = std::find_if(cells.begin(), cells.end(), [&](const CellResult& c) { return plan_.index_of(c.spec.key) > at; });
    cells.insert(pos, std::move(result));
    save();
}

void SweepRecord::save() {
    if (observer_ != nullptr) results_.run.json_stream = observer_->stream_stats();
    if (!options_.output_path.empty()) save_results(results_, options_.output_path);
}

std::optional<std::string> SweepRecord::duplicate_of(const CellResult& result, const std::string& key) {
    const auto fp = settings_fingerprint(result);
    if (const auto it = measured_.find(fp); it != measured_.end()) return it->second;
    measured_.emplace(fp, key);
    return std::nullopt;
}

void SweepRecord::forget(const std::string& key) {
    std::erase_if(measured_, [&](const auto& m) { return m.second == key; });
}

}  // namespace nm

// The sweep with a peer agent on fakes: a confirm the agent refuses (it had rolled the change back), a
// lost control connection that comes back, and an agent that does not.
#include <catch2/catch.hpp>

#include "core/base/error.hpp"
#include "matrix/config.hpp"
#include "matrix/results_store.hpp"
#include "matrix/runner.hpp"
#include "tests/support/matrix_fakes.hpp"
#include "tests/support/matrix_world.hpp"

using nm::CellStatus;
using nm::test::cell;
using nm::test::TempDir;
using nm::test::World;

namespace {

// The peer agent's end over the World's remote fake: it reverts a change that is not confirmed, refuses a
// confirm for a change it reverted, and restores everything when the connection is lost.
class FakeAgentEnd final : public nm::DeviceControl, public nm::ConfirmedEnd {
public:
    explicit FakeAgentEnd(nm::test::FakeDeviceControl& device) : device_(device), original_(device.state("nm-b")) {}

    nm::LinkState read(std::string_view ifname) override {
        require_connected();
        return device_.read(ifname);
    }
    void validate(std::string_view ifname, const nm::LinkSettings& wanted) override {
        require_connected();
        device_.validate(ifname, wanted);
    }
    nm::ApplyReport apply(std::string_view ifname, const nm::LinkSettings& wanted) override {
        require_connected();
        ++applies;
        if (!unconfirmed_) unconfirmed_ = device_.read(ifname);
        nm::ApplyReport report = device_.apply(ifname, wanted);
        if (wanted.mtu && wanted.mtu == link_lost_at_mtu) {
            // The agent's link did not come back: it takes the change back itself and says so (change 0).
            revert();
            report.link = nm::LinkSettle{};
            report.link->back = false;
            report.link->link_down_s = 10;
            report.link->state = "no carrier, operstate down";
        }
        return report;
    }
    bool ping(std::chrono::milliseconds) override { return connected_; }
    Confirmation confirm() override {
        require_connected();
        ++confirms;
        if (late_confirms.count(confirms) != 0) {
            revert();  // the window passed before the confirm came
            return Confirmation::RolledBack;
        }
        unconfirmed_.reset();
        return Confirmation::Confirmed;
    }
    bool await_rollback(std::chrono::milliseconds) override {
        if (!connected_) return false;
        revert();
        return true;
    }
    std::vector<nm::ApplyReport> restore() override {
        require_connected();
        unconfirmed_.reset();
        return {back_to_original()};
    }
    bool connected() const override { return connected_; }
    void reconnect(std::chrono::milliseconds) override {
        ++reconnects;
        if (!comes_back) throw nm::Error(nm::ErrorKind::Failed, "peer agent 198.18.0.2:5301 did not come back within 15 s (connection refused)");
        connected_ = true;
    }

    /// The connection drops: the agent restores its side, as the real one does.
    void lose() {
        connected_ = false;
        unconfirmed_.reset();
        back_to_original();
    }

    std::set<size_t> late_confirms;            // confirm numbers (1-based) that come after the window
    std::optional<uint32_t> link_lost_at_mtu;  // an MTU after which the agent's link never comes back
    bool comes_back = true;
    size_t applies = 0, confirms = 0, reconnects = 0;

private:
    void require_connected() const {
        if (!connected_) throw nm::Error(nm::ErrorKind::Closed, "peer agent 198.18.0.2:5301: control connection lost");
    }
    void revert() {
        if (!unconfirmed_) return;
        const auto back = nm::settings_back_to(*unconfirmed_, device_.read("nm-b"));
        if (!back.empty()) device_.apply("nm-b", back);
        unconfirmed_.reset();
    }
    nm::ApplyReport back_to_original() {
        const auto back = nm::settings_back_to(original_, device_.state("nm-b"));
        return back.empty() ? nm::ApplyReport{} : device_.apply("nm-b", back);
    }

    nm::test::FakeDeviceControl& device_;
    nm::LinkState original_;
    std::optional<nm::LinkState> unconfirmed_;
    bool connected_ = true;
};

struct AgentWorld : World {
    FakeAgentEnd agent{remote};
    AgentWorld() { target.remote = {&agent, "nm-b", "", &agent}; }
};

nm::SweepConfig config(const std::string& patch = "{}") {
    return nm::test::sweep_config({R"({
      "offloads": [{"name": "tso-off", "features": {"tso": "off"}}, {"name": "gro-on", "features": {"gro": "on"}}],
      "mtu": [1500, 4000], "traffic": [{"streams": 1}], "duration_s": 1, "omit_s": 0, "repetitions": 2, "cooldown_s": 0,
      "order": "sequential"})",
                                   patch});
}

/// The sweep went on after one reconnect and finished: every cell of config() recorded ok, with its two
/// repetitions, under the MTU the agent applied.
void check_finished_after_one_reconnect(const AgentWorld& w, const nm::SweepOutcome& out) {
    CHECK_FALSE(out.interrupted);
    CHECK(w.agent.reconnects == 1);
    REQUIRE(out.results.cells.size() == 4);
    for (const auto& c : out.results.cells) {
        INFO(c.spec.key);
        CHECK(c.status == CellStatus::Ok);
        CHECK(c.runs.size() == 2);
        CHECK(c.applied_remote->mtu == c.spec.mtu);
    }
}

}  // namespace

TEST_CASE(
    "Peer agent: a confirm the agent refuses (it had rolled the change back) makes the cell unreachable_after_change, "
    "never measured under its label",
    "[unit]") {
    AgentWorld w;
    w.agent.late_confirms = {2};  // the second cell's confirm comes after the agent's window
    const auto out = w.run(config());
    REQUIRE(out.results.cells.size() == 4);
    const auto& late = cell(out.results, "tso-off/mtu4000/tcp-p1");
    CHECK(late.status == CellStatus::UnreachableAfterChange);
    CHECK(late.runs.empty());
    CHECK(late.error ==
          "after the change (mtu=4000 tso=off on the peer): the peer agent had already rolled the change back when the "
          "confirmation came (its confirm window had passed); both ends reverted it");
    for (const auto* key : {"tso-off/mtu1500/tcp-p1", "gro-on/mtu1500/tcp-p1", "gro-on/mtu4000/tcp-p1"}) {
        INFO(key);
        CHECK(cell(out.results, key).status == CellStatus::Ok);
        CHECK(cell(out.results, key).runs.size() == 2);
    }
    // Measured: 3 cells x 2 repetitions; the refused one not at all.
    CHECK(w.traffic.specs.size() == 6);
    // The cell after it starts from the originals on both ends (features reset, not left over).
    CHECK(cell(out.results, "gro-on/mtu1500/tcp-p1").applied_remote->features.at("tx-tcp-segmentation") == true);
    CHECK(cell(out.results, "gro-on/mtu1500/tcp-p1").applied_local->features.at("tx-tcp-segmentation") == true);
    w.check_restored();
}

TEST_CASE(
    "Peer agent: a control connection lost mid-cell is reconnected, the cell runs again from the originals, and the sweep "
    "finishes",
    "[unit]") {
    AgentWorld w;
    w.traffic.on_run = [&](size_t n, const nm::TestSpec&) {
        if (n == 3) w.agent.lose();  // the first repetition of the second cell: the agent restores its side
    };
    const auto out = w.run(config());
    CHECK(out.stopped_because.empty());
    check_finished_after_one_reconnect(w, out);
    // 4 cells x 2, plus the cut cell's first try (the fake engine does not notice the loss).
    CHECK(w.traffic.specs.size() == 10);
    CHECK(std::find(w.observer.notes.begin(), w.observer.notes.end(), "reconnected to the peer agent; its side is at its original state") !=
          w.observer.notes.end());
    CHECK_FALSE(out.results.run.finished.empty());
    w.check_restored();
}

TEST_CASE(
    "Peer agent: when the agent does not come back the sweep restores its side, keeps the finished cells and changes nothing "
    "more",
    "[unit]") {
    TempDir dir;
    nm::SweepOptions options;
    options.output_path = dir.file("r.json");
    AgentWorld w;
    size_t local_calls_at_loss = 0;
    w.traffic.on_run = [&](size_t n, const nm::TestSpec&) {
        if (n == 3) {
            w.agent.comes_back = false;
            w.agent.lose();
            local_calls_at_loss = w.local.calls().size();
        }
    };
    const auto out = w.run(config(), options);
    CHECK(out.interrupted);
    CHECK(out.stopped_because ==
          "lost the peer agent: peer agent 198.18.0.2:5301 did not come back within 15 s "
          "(connection refused)");
    CHECK(w.agent.reconnects == 1);
    // The finished cell is kept, the cut one is not recorded, and the file says the run did not finish.
    REQUIRE(out.results.cells.size() == 1);
    CHECK(out.results.cells[0].spec.key == "tso-off/mtu1500/tcp-p1");
    const auto file = nm::load_results(options.output_path);
    CHECK(file.cells.size() == 1);
    CHECK(file.run.finished.empty());
    // After the loss: no cell is applied on the local end; only the restore changes it back.
    size_t applies_after = 0;
    for (size_t i = local_calls_at_loss; i < w.local.calls().size(); ++i) applies_after += w.local.calls()[i].op == "apply";
    CHECK(applies_after <= 1);
    // The cut cell's other repetition (the fake engine does not notice the loss), then nothing.
    CHECK(w.traffic.specs.size() == 4);
    w.check_restored();
    CHECK(w.journal.entries().empty());
}

TEST_CASE("Peer agent: a loss between cells is noticed before the next cell changes anything", "[unit]") {
    AgentWorld w;
    w.traffic.on_run = [&](size_t n, const nm::TestSpec&) {
        if (n == 2) w.agent.lose();  // the last repetition of the first cell: its figures were taken before
    };
    const auto out = w.run(config(R"({"repetitions": 2})"));
    CHECK(w.agent.reconnects == 1);
    // The cell the loss happened in is run again: a measurement during which the peer was restored is not kept.
    CHECK(w.traffic.specs.size() == 10);
    for (const auto& c : out.results.cells) CHECK(c.status == CellStatus::Ok);
    w.check_restored();
}

TEST_CASE(
    "Peer agent: shuffled rounds: a loss during a later visit of a recorded cell drops only that visit's repetition, which "
    "runs again once reconnected",
    "[unit]") {
    AgentWorld w;
    size_t lost_at = 0;
    w.traffic.on_run = [&](size_t n, const nm::TestSpec&) {
        if (n == 6) {  // round 2 (runs 5-8): the second visit of some cell
            w.agent.lose();
            lost_at = n;
        }
    };
    nm::SweepOptions options;
    options.seed = 7;
    const auto out = w.run(config(R"({"order": "shuffled"})"), options);
    REQUIRE(lost_at == 6);
    // Two runs a cell, not 3: the repetition taken while the peer was being restored is not kept.
    check_finished_after_one_reconnect(w, out);
    // 4 cells x 2, plus the cut visit's first try.
    CHECK(w.traffic.specs.size() == 9);
    CHECK(out.cells_run == 4);
    w.check_restored();
}

TEST_CASE("Peer agent: a change after which the agent's link did not come back makes the cell link_lost, this side rolled back too", "[unit]") {
    AgentWorld w;
    w.agent.link_lost_at_mtu = 4000;
    const auto out = w.run(config(R"({"offloads": [{"name": "tso-off", "features": {"tso": "off"}}]})"));
    REQUIRE(out.results.cells.size() == 2);
    const auto& ok = out.results.cells[0];
    const auto& lost = out.results.cells[1];
    CHECK(ok.status == CellStatus::Ok);
    CHECK(lost.spec.mtu == 4000);
    CHECK(lost.status == CellStatus::LinkLost);
    CHECK(lost.runs.empty());
    CHECK_THAT(lost.error, Catch::Contains("nm-b") && Catch::Contains("the peer agent rolled it back") && Catch::Contains("no carrier"));
    // This side's 4000 was taken back at once too; nothing was confirmed for the lost cell.
    CHECK(w.local.state("nm-a").mtu == 1500);
    CHECK(w.agent.confirms == 1);
    w.check_restored();
}

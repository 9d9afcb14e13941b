#include "matrix/sweep_ends.hpp"

#include <algorithm>
#include <thread>

#include "core/base/error.hpp"
#include "core/base/number_text.hpp"
#include "ethtool_ctl/restore_settings.hpp"
#include "matrix/end_settings.hpp"
#include "matrix/runner.hpp"

namespace nm {
namespace {

// How long the check after each cell waits for the peer agent's answer before counting it as lost.
constexpr auto kAgentAliveTimeout = std::chrono::seconds(5);

const char* role_name(EndRole role) {
    switch (role) {
        case EndRole::Local: return "local";
        case EndRole::Remote: return "remote";
        case EndRole::Dut: return "dut";
    }
    return "local";
}

// True when an end's link dropped after a change (the path must then answer again before measuring).
bool dropped(const ChangeLink& link) {
    return std::any_of(link.ends.begin(), link.ends.end(),
                       [](const ChangeLink::End& e) { return e.link.carrier_drops > 0 || e.link.link_down_s > 0; });
}

// What a leftover restore at the start did, for the observer.
std::string journal_note(const JournalReport& r) {
    switch (r.action) {
        case JournalAction::Restored: return "restored " + r.ifname + " from a leftover journal" + (r.note.empty() ? "" : " (" + r.note + ")");
        case JournalAction::LeftAlone: return end_label(r.ifname, r.where) + ": " + r.note;
        default: return "leftover journal: " + end_label(r.ifname, r.where) + ": " + r.note;
    }
}

}  // namespace

SweepEnds::SweepEnds(const SweepPlan& plan, const SweepTarget& target, SweepServices& services, const SweepOptions& options, std::stop_token stop)
    : plan_(plan), config_(plan.config), target_(target), s_(services), options_(options), stop_(std::move(stop)) {}

void SweepEnds::note(const std::string& text) {
    if (s_.observer) s_.observer->on_note(text);
}

LinkWait SweepEnds::link_wait() const {
    LinkWait w;
    w.bound = std::chrono::milliseconds(static_cast<int64_t>(config_.link_wait_s * 1000));
    w.stop = stop_;
    return w;
}

// Changes an end: journalled write by write when the end is this host's (the journal knows what to take
// back), sent as they are to a peer agent (which journals on its side). With a link wait, the link is
// waited out after the change (a peer agent waits for its own).
ApplyReport SweepEnds::apply(End& end, const LinkSettings& wanted, const LinkWait& link) {
    if (end.end->agent != nullptr) return end.end->device->apply(end.end->ifname, wanted);
    RecordedApply done = apply_recorded(*end.end->device, s_.journal, end.end->ifname, wanted, nullptr, link);
    merge_writes(end.writes, done.writes);
    return std::move(done.report);
}

void SweepEnds::restore_leftovers() {
    // Entries left by a sweep (or `set`) that is gone: put those interfaces back before reading any
    // original. Entries of processes that still run (another sweep, an agent) are theirs: left alone.
    for (const auto& rep : s_.journal.restore(RestoreOptions{})) note(journal_note(rep));
}

void SweepEnds::open() {
    std::vector<std::pair<const SweepEnd*, EndRole>> all = {{&target_.local, EndRole::Local}, {&target_.remote, EndRole::Remote}};
    for (const auto& d : target_.dut) all.emplace_back(&d, EndRole::Dut);
    for (const auto& [end, role] : all) {
        if (end->device == nullptr) continue;
        End rt;
        rt.end = end;
        rt.role = role;
        rt.remote = role == EndRole::Remote;
        rt.original = end->device->read(end->ifname);
        if (role != EndRole::Dut) rt.system = end->device->describe(end->ifname);
        rt.changes =
            std::any_of(plan_.cells.begin(), plan_.cells.end(), [&, r = role](const CellSpec& c) { return !cell_settings(config_, c, r).empty(); });
        ends_.push_back(std::move(rt));
    }
}

// A setting an end cannot take (an MTU above what the device allows, as an 8139's 1500 or 4096; rings on
// veth, a sysctl its namespace lacks) makes the cell infeasible with the kernel's reason, found here,
// before anything is changed.
std::map<std::string, std::string> SweepEnds::infeasible_cells() const {
    std::map<std::string, std::string> out;
    for (const auto& cell : plan_.cells) {
        std::string why;
        for (const auto& e : ends_) {
            const LinkSettings wanted = cell_settings(config_, cell, e.role);
            const LinkState& o = e.original;
            if (wanted.mtu && o.mtu_max > 0 && (*wanted.mtu < o.mtu_min || *wanted.mtu > o.mtu_max)) {
                why += (why.empty() ? "" : "; ") + end_label(e.end->ifname, o.netns) + ": mtu " + std::to_string(*wanted.mtu) +
                       " outside the device's range " + std::to_string(o.mtu_min) + ".." + std::to_string(o.mtu_max) +
                       " (IFLA_MIN_MTU..IFLA_MAX_MTU)";
            }
            if (wanted.tuning.empty()) continue;
            const std::string reason = e.end->device->unsupported(e.end->ifname, wanted);
            if (!reason.empty()) why += (why.empty() ? "" : "; ") + reason;
        }
        if (!why.empty()) out[cell.key] = why;
    }
    return out;
}

void SweepEnds::describe(ResultsFile& r) const {
    for (const auto& e : ends_) {
        if (e.role == EndRole::Dut) continue;
        auto& info = (e.remote ? r.remote : r.local).interface;
        info = interface_info(e.original);
        info->system = e.system;
        info->emulator = e.end->emulator;
        info->device_model = e.end->device_model;
    }
}

// Every end is claimed before the first change: a second sweep or `set` on an interface that a live
// process holds stops here (nm::Error Refused naming it), with nothing changed.
void SweepEnds::claim() {
    for (auto& e : ends_) {
        if (!e.changes || e.end->agent != nullptr) continue;
        s_.journal.remember(e.original);
        e.claimed = true;
    }
}

// Takes back on every claimed end what this process wrote there (the journal's writes: a setting someone
// else changed meanwhile is left as it is and noted), and drops its journal entry once the restore holds.
// An end whose restore fails or does not hold keeps its entry (this process's, so `nicmatrix restore`
// takes it once this process is gone) and gets a note.
std::vector<ApplyReport> SweepEnds::restore() {
    std::vector<ApplyReport> out;
    for (auto& e : ends_) {
        if (!e.claimed) continue;
        const std::string where = end_label(e.end->ifname, e.original.netns);
        ApplyReport rep;
        try {
            const UndoResult done = undo_writes(*e.end->device, e.end->ifname, e.writes);
            rep = done.report;
            // A real NIC resets on the way back too: the sweep ends with the link up as it found it (not
            // cut short by a stop: the restore is what a stop asks for).
            if (e.original.operstate == "up" && !wait_for_carrier(*e.end->device, e.end->ifname, link_wait().bound)) {
                note(where + " has no carrier " + number_text(config_.link_wait_s) + " s after its restore");
            }
            if (!done.foreign.empty()) {
                note("left as they are on " + where + ", changed since by someone else: " + done.foreign);
            }
            if (done.differences.empty()) {
                s_.journal.release(e.original);
                e.claimed = false;
            } else {
                rep.note =
                    "restore did not hold on " + where + ":" + done.differences + "; the journal keeps its original (nicmatrix restore tries again)";
            }
        } catch (const std::exception& err) {
            rep.ifname = e.end->ifname;
            rep.netns = e.original.netns;
            rep.note = "restore " + where + ": " + err.what() + "; the journal keeps its original (nicmatrix restore tries again)";
        }
        out.push_back(std::move(rep));
    }
    return out;
}

void SweepEnds::start_over() {
    current_profile_.reset();
    for (auto& end : ends_) end.features_dirty = true;
}

bool SweepEnds::link_dropped() const { return pending_link_ && dropped(*pending_link_); }

std::optional<double> SweepEnds::local_link_bps() const {
    const auto local = std::find_if(ends_.begin(), ends_.end(), [](const End& e) { return e.role == EndRole::Local; });
    if (local == ends_.end()) return std::nullopt;
    const LinkState now = local->end->device->read(local->end->ifname);
    if (now.speed_mbps) return *now.speed_mbps * 1e6;
    return std::nullopt;
}

std::vector<InterfaceCoalesce> SweepEnds::interfaces() const {
    std::vector<InterfaceCoalesce> out;
    for (const auto& e : ends_) out.push_back({e.original.netns, e.end->ifname, e.original.coalesce});
    return out;
}

// Adds what one change did to `end`'s link to the visit's figures (one entry per end: a profile's reset
// and the cell's change add up). False, with the cell link_lost, when the link was not back.
bool SweepEnds::note_link(const End& end, const ApplyReport& report, CellResult& result) {
    if (!report.link) return true;
    const LinkSettle& l = *report.link;
    if (!pending_link_) pending_link_ = ChangeLink{};
    auto it = std::find_if(pending_link_->ends.begin(), pending_link_->ends.end(),
                           [&](const ChangeLink::End& e) { return e.ifname == end.end->ifname && e.end == role_name(end.role); });
    if (it == pending_link_->ends.end()) {
        pending_link_->ends.push_back({role_name(end.role), end.end->ifname, l});
    } else {
        it->link.link_down_s += l.link_down_s;
        it->link.carrier_drops += l.carrier_drops;
        it->link.wait_s += l.wait_s;
        it->link.back = l.back;
        it->link.state = l.state;
    }
    double down = 0;
    for (const auto& e : pending_link_->ends) down = std::max(down, e.link.link_down_s);
    pending_link_->link_down_s = down;
    pending_link_->settle_s += l.wait_s;  // the ends are changed one after the other
    if (l.back) return true;
    result.status = CellStatus::LinkLost;
    result.error = end_label(end.end->ifname, end.original.netns) + ": the link was not back " + number_text(config_.link_wait_s) +
                   " s after the change (" + l.state + ")" + (end.end->agent != nullptr ? "; the peer agent rolled it back" : "");
    return false;
}

bool SweepEnds::apply_end(End& end, const CellSpec& cell, CellResult& result) {
    auto& device = *end.end->device;
    const auto& ifname = end.end->ifname;
    LinkSettings wanted = cell_settings(config_, cell, end.role);
    complete_from_original(config_, wanted.tuning, end.original.tuning);

    // Every cell starts from the original state. Cells come profile by profile, so the features of the
    // previous profile are put back (in their kernel names, one request) only when the profile changes;
    // cells of the same profile differ only in MTU and traffic, and the profile's request is the same.
    if (end.features_dirty && current_profile_ != cell.profile_index) {
        const LinkState now = device.read(ifname);
        LinkSettings reset;
        for (const auto& [name, f] : now.features) {
            const auto it = end.original.features.find(name);
            if (it != end.original.features.end() && !it->second.fixed && f.wanted != it->second.wanted) {
                reset.features[name] = it->second.wanted;
            }
        }
        // A real NIC may reset on this too (an e1000e renegotiates on `rx` checksum changes): waited out
        // and counted with the cell's own change.
        if (!reset.empty() && !note_link(end, apply(end, reset, link_wait()), result)) return false;
        end.features_dirty = false;
    }

    EndSettings applied;
    if (wanted.empty()) {
        applied = end_settings(device.read(ifname), config_);
    } else {
        const ApplyReport report = apply(end, wanted, link_wait());
        if (!wanted.features.empty()) end.features_dirty = true;
        if (!note_link(end, report, result)) return false;
        applied = effective_settings(end.original, report.mtu_after, report.active_after);
        // What the kernel really has of the tuning kinds, read back after the change.
        if (!config_.axes.empty()) applied.tuning = trimmed_tuning(device.read(ifname).tuning, config_);
        if (!report.all_requested_hold()) {
            result.status = CellStatus::Infeasible;
            result.error = infeasible_reason(report);
        }
    }
    switch (end.role) {
        case EndRole::Local: result.applied_local = applied; break;
        case EndRole::Remote: result.applied_remote = applied; break;
        case EndRole::Dut: result.applied_dut[ifname] = applied; break;
    }
    return result.status != CellStatus::Infeasible;
}

bool SweepEnds::apply_cell(const CellSpec& cell, CellResult& result) {
    pending_link_.reset();
    try {
        std::vector<LinkState> before;
        const bool agent = target_.remote.agent != nullptr &&
                           std::any_of(ends_.begin(), ends_.end(), [](const End& e) { return e.end->agent != nullptr && e.changes; });
        // What to go back to when the change loses the link (or the peer agent does not confirm it).
        if (agent || config_.link_wait_s > 0) {
            for (auto& end : ends_) {
                before.push_back(end.end->agent != nullptr ? LinkState{} : end.end->device->read(end.end->ifname));
            }
        }
        for (auto& end : ends_) {
            if (!apply_end(end, cell, result)) break;
        }
        const auto changed = std::chrono::steady_clock::now();
        current_profile_ = cell.profile_index;
        if (result.status == CellStatus::LinkLost) {
            roll_back_cell(before);
            return false;
        }
        // A link that dropped and came back: the path answers before anything is measured (a switch
        // port relearning, the neighbour entry); settle_s counts that wait too.
        if (result.status == CellStatus::Ok && link_dropped() && !wait_for_path(cell, result, changed)) {
            roll_back_cell(before);
            return false;
        }
        if (agent && result.status == CellStatus::Ok) return confirm_change(cell, result, before);
    } catch (const Error& e) {
        // The device refused (a setting it cannot take) or broke; either way this cell has no figures.
        result.status = e.kind() == ErrorKind::Failed ? CellStatus::Failed : CellStatus::Infeasible;
        result.error = e.what();
        start_over();
    }
    return false;
}

// After a change that dropped a link: probes the path until it answers again, within
// link_wait_s of the change. False (the cell marked link_lost) when it never does.
bool SweepEnds::wait_for_path(const CellSpec& cell, CellResult& result, std::chrono::steady_clock::time_point changed) {
    // A frame every path of this MTU carries (IPv6's minimum MTU at most): whether full-size frames
    // cross is the preflight's question (path_mtu_blackhole), not this one's.
    const uint32_t mtu = std::min<uint32_t>(result.applied_local ? result.applied_local->mtu : cell.mtu, 1280);
    const auto bound = std::chrono::duration<double>(config_.link_wait_s);
    std::string last;
    do {
        try {
            const auto probe = s_.probe.probe(mtu, options_.probe_timeout, stop_);
            if (probe.passed) {
                pending_link_->settle_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - changed).count();
                return true;
            }
            last = probe.detail;
        } catch (const Error& e) {
            last = e.what();  // the network unreachable a moment longer, say
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    } while (!stop_.stop_requested() && std::chrono::steady_clock::now() - changed < bound);
    result.status = CellStatus::LinkLost;
    result.error = "the link came back after the change but the path did not answer within " + number_text(config_.link_wait_s) + " s (" + last + ")";
    return false;
}

// Takes a cell's change back on this host's ends (to `before`, each end's state just before it; a peer
// agent takes its own back) and waits for their links, once each, so that the next cell starts from a link
// that is up. Every end starts the next cell from the originals.
void SweepEnds::roll_back_cell(const std::vector<LinkState>& before) {
    for (size_t i = 0; i < ends_.size() && i < before.size(); ++i) {
        auto& end = ends_[i];
        if (end.end->agent != nullptr || !end.changes) continue;
        const LinkSettings back = settings_back_to(before[i], end.end->device->read(end.end->ifname));
        if (!back.empty()) {
            const ApplyReport report = apply(end, back, link_wait());
            // The apply waited for the link already (it had carrier before): no second wait, no second note.
            if (report.link) {
                if (!report.link->back) {
                    note(end_label(end.end->ifname, end.original.netns) + ": the link was still not back " + number_text(config_.link_wait_s) +
                         " s after taking the cell's change back (" + report.link->state + ")");
                }
                continue;
            }
        }
        if (!wait_for_carrier(*end.end->device, end.end->ifname, link_wait().bound, stop_) && !stop_.stop_requested()) {
            note(end_label(end.end->ifname, end.original.netns) + " has no carrier after taking the cell's change back");
        }
    }
    start_over();
}

// Commit confirmed: with the peer agent, a cell's change stands only when the peer still answers on the
// control path, full-size DF frames cross the data path at the cell's MTU, and the agent takes the
// confirm (it refuses one that comes after its window: it has reverted the change already). Otherwise
// the agent reverts its side by itself (no confirm comes, or it came too late) and this end reverts its
// own; the cell is not measured, so it is never recorded under settings it did not have.
bool SweepEnds::confirm_change(const CellSpec& cell, CellResult& result, const std::vector<LinkState>& before) {
    ConfirmedEnd* agent = target_.remote.agent;
    const uint32_t mtu = result.applied_local ? result.applied_local->mtu : cell.mtu;
    std::string why;
    bool peer_said = false;
    if (!agent->ping(options_.probe_timeout)) {
        why = "the peer agent did not answer on the control path";
    } else {
        const auto probe = s_.probe.probe(mtu, options_.probe_timeout, stop_);
        if (!probe.passed) why = "the data path failed: " + probe.detail;
    }
    if (why.empty()) {
        if (agent->confirm() == ConfirmedEnd::Confirmation::Confirmed) return true;
        why = "the peer agent had already rolled the change back when the confirmation came (its confirm window had passed)";
        peer_said = true;
    }
    for (size_t i = 0; i < ends_.size(); ++i) {
        auto& end = ends_[i];
        if (end.end->agent != nullptr) continue;
        const LinkSettings back = settings_back_to(before[i], end.end->device->read(end.end->ifname));
        if (!back.empty()) apply(end, back);
    }
    if (!peer_said) peer_said = agent->await_rollback(options_.rollback_wait);
    result.status = CellStatus::UnreachableAfterChange;
    result.error = "after the change (" + describe_settings(cell_settings(config_, cell, true)) + " on the peer): " + why +
                   "; both ends reverted it" + (peer_said ? "" : " (the peer did not report its rollback in time)");
    start_over();
    return false;
}

// A round trip settles it: the connection may have died a moment ago (the agent killed while the cell
// measured) without its reader having seen it yet.
bool SweepEnds::agent_lost() const {
    ConfirmedEnd* agent = target_.remote.agent;
    return agent != nullptr && (!agent->connected() || !agent->ping(kAgentAliveTimeout));
}

// After a loss: reconnect within options_.agent_reconnect and check the peer is back at its originals.
void SweepEnds::recover_agent() {
    ConfirmedEnd& agent = *target_.remote.agent;
    // Every end is out of step with what the last cell left: the next apply starts from the originals.
    start_over();
    note("lost the control connection to the peer agent (it restores its side by itself); reconnecting for up to " +
         std::to_string(std::chrono::duration_cast<std::chrono::seconds>(options_.agent_reconnect).count()) + " s");
    try {
        agent.reconnect(options_.agent_reconnect);
        for (const auto& end : ends_) {
            if (end.end->agent == nullptr) continue;
            const LinkSettings differs = settings_back_to(end.original, end.end->device->read(end.end->ifname));
            if (!differs.empty()) {
                note("after the reconnect the peer's " + end.end->ifname + " is not at its original state (" + describe_settings(differs) +
                     " would put it back); the next cell starts over from the originals");
            }
        }
    } catch (const Error& e) {
        throw AgentGone{e.what()};
    }
    note("reconnected to the peer agent; its side is at its original state");
}

}  // namespace nm

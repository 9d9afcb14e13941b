#include "agent/change_ledger.hpp"

#include <algorithm>

namespace nm {

ChangeLedger::ChangeLedger(std::chrono::milliseconds heartbeat_timeout, Clock::time_point now)
    : heartbeat_timeout_(heartbeat_timeout), last_heard_(now) {}

void ChangeLedger::heard(Clock::time_point now) { last_heard_ = std::max(last_heard_, now); }

void ChangeLedger::record(Change change) {
    fate_[change.id] = Fate::Pending;
    pending_.push_back(std::move(change));
}

ChangeLedger::Confirmation ChangeLedger::confirm(uint64_t id) {
    const auto it = fate_.find(id);
    if (it == fate_.end()) return Confirmation::Unknown;
    switch (it->second) {
        case Fate::Confirmed: return Confirmation::AlreadyConfirmed;
        case Fate::RolledBack: return Confirmation::RolledBack;
        case Fate::Pending: break;
    }
    // A change was applied on top of the older ones: keeping it keeps them.
    const auto upto = std::find_if(pending_.begin(), pending_.end(), [&](const Change& c) { return c.id == id; });
    for (auto c = pending_.begin(); c != upto + 1; ++c) fate_[c->id] = Fate::Confirmed;
    pending_.erase(pending_.begin(), upto + 1);
    return Confirmation::Confirmed;
}

bool ChangeLedger::rollback_due(Clock::time_point now) const {
    return std::any_of(pending_.begin(), pending_.end(), [&](const Change& c) { return now >= c.deadline; });
}

std::vector<ChangeLedger::Change> ChangeLedger::take_for_rollback() {
    std::vector<Change> out(pending_.rbegin(), pending_.rend());
    for (const auto& c : pending_) fate_[c.id] = Fate::RolledBack;
    pending_.clear();
    return out;
}

void ChangeLedger::drop(uint64_t id) {
    std::erase_if(pending_, [&](const Change& c) { return c.id == id; });
    if (const auto it = fate_.find(id); it != fate_.end()) it->second = Fate::RolledBack;
}

bool ChangeLedger::silent(Clock::time_point now) const {
    if (now < last_heard_ + heartbeat_timeout_) return false;
    return std::none_of(pending_.begin(), pending_.end(), [&](const Change& c) { return now < c.deadline; });
}

Clock::time_point ChangeLedger::next_due() const {
    Clock::time_point due = last_heard_ + heartbeat_timeout_;
    for (const auto& c : pending_) due = std::max(due, c.deadline);  // silence waits for every window
    for (const auto& c : pending_) due = std::min(due, c.deadline);  // a window closing comes first
    return due;
}

}  // namespace nm

#include "ethtool_ctl/settings_journal.hpp"

namespace nm {

std::vector<ApplyReport> SettingsJournal::restore() {
    std::vector<ApplyReport> out;
    for (auto& r : restore(RestoreOptions{})) {
        if (r.action == JournalAction::LeftAlone) continue;
        ApplyReport a = r.applied.value_or(ApplyReport{});
        a.ifname = r.ifname;
        if (a.netns.empty()) a.netns = r.where;
        a.note = r.note;
        out.push_back(std::move(a));
    }
    return out;
}

}  // namespace nm

#include "core/device/device_types.hpp"

#include <algorithm>

namespace nm {

bool ApplyReport::all_requested_hold() const {
    const auto holds = [](SettingOutcome o) { return o == SettingOutcome::Applied || o == SettingOutcome::AlreadySet; };
    const bool features_hold =
        std::all_of(features.begin(), features.end(), [&](const FeatureChange& c) { return !c.requested || holds(c.outcome); });
    const bool tuning_holds = std::all_of(tuning.begin(), tuning.end(), [&](const TuningChange& c) { return holds(c.outcome); });
    return features_hold && tuning_holds && (!mtu || holds(mtu->outcome));
}

LinkSettings settings_back_to(const LinkState& before, const LinkState& now) {
    LinkSettings s;
    if (now.mtu != before.mtu) s.mtu = before.mtu;
    for (const auto& [name, f] : now.features) {
        const auto it = before.features.find(name);
        if (it != before.features.end() && !it->second.fixed && f.wanted != it->second.wanted) s.features[name] = it->second.wanted;
    }
    s.tuning = tuning_back_to(before.tuning, now.tuning);
    return s;
}

}  // namespace nm

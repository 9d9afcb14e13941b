#include "ethtool_ctl/feature_names.hpp"

#include <algorithm>

#include "core/base/error.hpp"

namespace nm {
namespace {

const FeatureGroup* group_named(std::string_view typed) {
    for (const auto& g : kFeatureGroups) {
        if (typed == g.short_name || typed == g.long_name) return &g;
    }
    return nullptr;
}

bool is_ufo(const FeatureGroup& g) { return g.short_name == "ufo"; }

}  // namespace

bool feature_pattern_match(std::string_view name, std::string_view pattern) {
    const auto star = pattern.find('*');
    if (star == std::string_view::npos) return name == pattern;
    const auto head = pattern.substr(0, star);
    const auto tail = pattern.substr(star + 1);
    return name.size() >= head.size() + tail.size() && name.substr(0, head.size()) == head && name.substr(name.size() - tail.size()) == tail;
}

ResolvedFeature resolve_feature_name(std::string_view typed, const std::vector<std::string>& kernel_names, std::string_view ifname) {
    ResolvedFeature out;
    if (const FeatureGroup* g = group_named(typed)) {
        out.group = true;
        for (const auto& name : kernel_names) {
            if (!name.empty() && feature_pattern_match(name, g->pattern)) out.kernel_names.push_back(name);
        }
        if (out.kernel_names.empty()) {
            throw usage_error("feature " + std::string(typed) + " (" + std::string(g->long_name) + ") does not exist on " + std::string(ifname) +
                              ": this kernel has no feature matching " + std::string(g->pattern));
        }
        return out;
    }
    if (typed.empty() || std::find(kernel_names.begin(), kernel_names.end(), typed) == kernel_names.end()) {
        throw usage_error("unknown feature \"" + std::string(typed) + "\" on " + std::string(ifname) +
                          " (use an ethtool name such as tso, tx-checksumming or a kernel feature shown by `nicmatrix show`)");
    }
    out.kernel_names.emplace_back(typed);
    return out;
}

std::vector<FeatureRow> ethtool_k_rows(const std::vector<std::string>& kernel_names) {
    // Each feature belongs to the first group whose pattern matches it, as in ethtool's dump_features.
    std::vector<int> owner(kernel_names.size(), -1);
    for (size_t i = 0; i < kernel_names.size(); ++i) {
        if (kernel_names[i].empty()) continue;
        for (size_t g = 0; g < kFeatureGroups.size(); ++g) {
            if (feature_pattern_match(kernel_names[i], kFeatureGroups[g].pattern)) {
                owner[i] = static_cast<int>(g);
                break;
            }
        }
    }
    std::vector<FeatureRow> rows;
    for (size_t g = 0; g < kFeatureGroups.size(); ++g) {
        // No kernel with ethtool netlink has UFO, and ethtool -k leaves it out.
        if (is_ufo(kFeatureGroups[g])) continue;
        std::vector<std::string> members;
        for (size_t i = 0; i < kernel_names.size(); ++i) {
            if (owner[i] == static_cast<int>(g)) members.push_back(kernel_names[i]);
        }
        const std::string long_name(kFeatureGroups[g].long_name);
        if (members.size() == 1) {
            rows.push_back({long_name, members, false, false});
            continue;
        }
        rows.push_back({long_name, members, true, false});
        for (const auto& m : members) rows.push_back({m, {m}, false, true});
    }
    for (size_t i = 0; i < kernel_names.size(); ++i) {
        if (!kernel_names[i].empty() && owner[i] < 0) rows.push_back({kernel_names[i], {kernel_names[i]}, false, false});
    }
    return rows;
}

FeatureState row_state(const FeatureRow& row, const std::map<std::string, FeatureState>& features) {
    FeatureState state;
    state.fixed = true;
    for (const auto& m : row.members) {
        const auto it = features.find(m);
        if (it == features.end()) continue;
        state.active = state.active || it->second.active;
        state.wanted = state.wanted || it->second.wanted;
        state.fixed = state.fixed && it->second.fixed;
    }
    return state;
}

std::map<std::string, FeatureState> ethtool_k_view(const std::vector<std::string>& kernel_names,
                                                   const std::map<std::string, FeatureState>& features) {
    std::map<std::string, FeatureState> view;
    for (const auto& row : ethtool_k_rows(kernel_names)) view[row.name] = row_state(row, features);
    return view;
}

}  // namespace nm

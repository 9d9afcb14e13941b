#include "matrix/profile_metrics.hpp"

#include <algorithm>
#include <cctype>

namespace nm {

void add_profile_metrics(const RunResult& run, std::map<std::string, double>& metrics) {
    const auto& s = run.sender.profile;
    const auto& r = run.receiver.profile;
    if (!s && !r) return;
    const bool shared = s && r && !s->shared_with.empty();
    if (shared || !s || !r) {
        const CpuProfile& only = s ? *s : *r;
        for (const auto& [name, pct] : only.categories) metrics["cpu:" + name] = pct;
        if (!shared) {
            const std::string end = s ? "sender" : "receiver";
            for (const auto& [name, pct] : only.categories) metrics["cpu:" + end + ":" + name] = pct;
        }
        return;
    }
    // Two hosts: each end's own, and both pooled by their samples.
    const double ns = static_cast<double>(s->samples), nr = static_cast<double>(r->samples);
    std::map<std::string, double> pooled;
    for (const auto& [name, pct] : s->categories) {
        metrics["cpu:sender:" + name] = pct;
        pooled[name] += pct * ns;
    }
    for (const auto& [name, pct] : r->categories) {
        metrics["cpu:receiver:" + name] = pct;
        pooled[name] += pct * nr;
    }
    for (const auto& [name, weighted] : pooled) metrics["cpu:" + name] = ns + nr > 0 ? weighted / (ns + nr) : 0;
}

bool is_profile_metric(const std::string& name) {
    if (name.rfind("cpu:", 0) != 0) return false;
    std::string rest = name.substr(4);
    for (const char* end : {"sender:", "receiver:"}) {
        if (rest.rfind(end, 0) == 0) {
            rest = rest.substr(std::string(end).size());
            break;
        }
    }
    return !rest.empty() && std::all_of(rest.begin(), rest.end(), [](char c) {
        return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_';
    });
}

}  // namespace nm

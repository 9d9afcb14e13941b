#include "core/profile/profile_aggregate.hpp"

#include <algorithm>
#include <map>

#include "core/profile/categories.hpp"

namespace nm::profile {
namespace {

struct Counts {
    uint64_t total = 0;
    std::map<std::string, uint64_t> by_category;
    void add(const std::string& category) {
        ++total;
        ++by_category[category];
    }
    std::map<std::string, double> shares(const CategoryTable& table) const {
        std::map<std::string, double> out;
        for (const auto& c : table.categories) {
            const auto it = by_category.find(c);
            out[c] = total > 0 && it != by_category.end() ? 100.0 * static_cast<double>(it->second) / static_cast<double>(total) : 0.0;
        }
        return out;
    }
};

const std::string kUser = "user", kIdle = "idle", kOther = "other";

template <typename Key>
std::vector<std::pair<Key, uint64_t>> hottest(const std::map<Key, uint64_t>& counts, size_t n) {
    std::vector<std::pair<Key, uint64_t>> v(counts.begin(), counts.end());
    std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    if (v.size() > n) v.resize(n);
    return v;
}

}  // namespace

CpuProfile aggregate_profile(const std::vector<NamedSample>& samples, const CategoryTable& table, const TaskClasses& tasks,
                             const WindowFacts& window) {
    CategoryMatcher matcher(table);
    Counts all;
    std::map<uint32_t, Counts> per_cpu;
    for (uint32_t c : window.cpus) per_cpu[c];
    std::map<std::string, Counts> per_class;
    for (const char* c : kProfileTaskClasses) per_class[c];
    std::map<std::string, uint64_t> other_comms;
    std::map<std::pair<std::string, std::string>, uint64_t> symbols;  // (symbol, category)
    std::map<std::string, uint64_t> unmatched;
    std::map<int32_t, std::string> comm_cache;

    for (const auto& s : samples) {
        const std::string* category = &kUser;
        if (!s.user) {
            category = matcher.kernel_category(s.symbol);
            if (category == nullptr) {
                category = s.pid == 0 ? &kIdle : &kOther;
                if (s.pid != 0) ++unmatched[s.symbol];
            }
        }
        all.add(*category);
        per_cpu[s.cpu].add(*category);
        ++symbols[{s.symbol, *category}];

        std::string klass = "other";
        std::string comm;
        if (s.pid == 0) {
            if (*category == kIdle) klass = "idle";
            else comm = "swapper";
        } else if (tasks.send.count(s.tid)) {
            klass = "sender";
        } else if (tasks.recv.count(s.tid)) {
            klass = "receiver";
        } else {
            auto it = comm_cache.find(s.tid);
            if (it == comm_cache.end()) it = comm_cache.emplace(s.tid, tasks.comm ? tasks.comm(s.pid, s.tid) : std::string("?")).first;
            comm = it->second;
            if (comm.rfind("ksoftirqd/", 0) == 0) klass = "ksoftirqd";
        }
        per_class[klass].add(*category);
        if (klass == "other") ++other_comms[comm.empty() ? "?" : comm];
    }

    const auto pct = [&](uint64_t n) { return all.total > 0 ? 100.0 * static_cast<double>(n) / static_cast<double>(all.total) : 0.0; };
    CpuProfile p;
    p.host = window.host;
    p.samples = all.total;
    p.lost = window.lost;
    p.hz = window.hz;
    p.cpus = static_cast<uint32_t>(window.cpus.size());
    p.start_monotonic_s = window.start_monotonic_s;
    p.end_monotonic_s = window.end_monotonic_s;
    p.window_s = std::max(0.0, window.end_monotonic_s - window.start_monotonic_s);
    p.table = table.source;
    p.categories = all.shares(table);
    for (const auto& [cpu, counts] : per_cpu) p.by_cpu.push_back({cpu, counts.total, counts.shares(table)});
    for (const auto& [klass, counts] : per_class) p.by_task[klass] = {pct(counts.total), counts.total, counts.shares(table)};
    for (const auto& [comm, n] : hottest(other_comms, kTopOtherTasks)) p.other_tasks.push_back({comm, pct(n)});
    for (const auto& [key, n] : hottest(symbols, kTopSymbols)) p.top.push_back({key.first, pct(n), key.second});
    for (const auto& [name, n] : hottest(unmatched, kTopUnmatched)) p.unmatched.push_back({name, pct(n), "other"});
    return p;
}

}  // namespace nm::profile

// JSON of where CPU time went: one CPU's share of a window (an entry of cpu.system.<end>.per_cpu) and a
// host's CPU-time accounting (hosts.<end>.cpu_accounting). Readers are tolerant: missing keys keep their
// defaults, so files written before these fields read back as "not measured" / "unknown".
#include "core/base/error.hpp"
#include "core/base/cpu_codec.hpp"
#include "core/base/json_optional_field.hpp"

namespace nm {

using codec::opt;

void to_json(Json& j, const PerCpu& v) {
    j = Json{{"cpu", v.cpu},
             {"busy_pct", v.busy_pct},
             {"user_pct", v.user_pct},
             {"sys_pct", v.sys_pct},
             {"irq_pct", v.irq_pct},
             {"softirq_pct", v.softirq_pct},
             {"steal_pct", v.steal_pct}};
}

void from_json(const Json& j, PerCpu& v) {
    opt(j, "cpu", v.cpu);
    opt(j, "busy_pct", v.busy_pct);
    opt(j, "user_pct", v.user_pct);
    opt(j, "sys_pct", v.sys_pct);
    opt(j, "irq_pct", v.irq_pct);
    opt(j, "softirq_pct", v.softirq_pct);
    opt(j, "steal_pct", v.steal_pct);
}

void to_json(Json& j, const KernelOption& v) { j = v == KernelOption::Yes ? "yes" : v == KernelOption::No ? "no" : "unknown"; }

void from_json(const Json& j, KernelOption& v) {
    const auto s = j.is_string() ? j.get<std::string>() : std::string();
    v = s == "yes" ? KernelOption::Yes : s == "no" ? KernelOption::No : KernelOption::Unknown;
}

void to_json(Json& j, const CpuAccounting& v) {
    j = Json{{"source", v.source.empty() ? Json(nullptr) : Json(v.source)},
             {"irq_time_accounting", v.irq_time},
             {"cputime", v.cputime},
             {"no_hz_full", v.no_hz_full},
             {"softirq_in_task_time", v.softirq_in_task_time()}};
}

void from_json(const Json& j, CpuAccounting& v) {
    opt(j, "source", v.source);
    opt(j, "irq_time_accounting", v.irq_time);
    opt(j, "cputime", v.cputime);
    opt(j, "no_hz_full", v.no_hz_full);
}

}  // namespace nm

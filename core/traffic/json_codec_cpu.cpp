// JSON of where CPU time went: one CPU's share of a window (an entry of cpu.system.<end>.per_cpu) and a
// host's CPU-time accounting (hosts.<end>.cpu_accounting). Readers are tolerant: missing keys keep their
// defaults, so files written before these fields read back as "not measured" / "unknown".
#include "core/base/error.hpp"
#include "core/base/field_json.hpp"
#include "core/traffic/cpu_codec.hpp"

namespace nm {

void to_json(Json& j, const KernelOption& v) { j = v == KernelOption::Yes ? "yes" : v == KernelOption::No ? "no" : "unknown"; }

void from_json(const Json& j, KernelOption& v) {
    const auto s = j.is_string() ? j.get<std::string>() : std::string();
    v = s == "yes" ? KernelOption::Yes : s == "no" ? KernelOption::No : KernelOption::Unknown;
}

// The listed fields (cpu_types.hpp) and the computed softirq_in_task_time, written for the reader, not read.
void to_json(Json& j, const CpuAccounting& v) {
    write_fields(j, v, json_fields_and_more(&v));
    j["softirq_in_task_time"] = v.softirq_in_task_time();
}

void from_json(const Json& j, CpuAccounting& v) { read_fields(j, v, json_fields_and_more(&v)); }

}  // namespace nm

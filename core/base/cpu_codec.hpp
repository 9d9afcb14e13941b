#pragma once
// JSON of where CPU time went (json_codec_cpu.cpp): one CPU over a window, and a host's CPU-time accounting
// ({source, irq_time_accounting, cputime, no_hz_full, softirq_in_task_time}; "yes"/"no"/"unknown").
// One to_json/from_json pair per value type, found by nlohmann::json through ADL.
#include "core/base/cpu_types.hpp"
#include "core/base/json.hpp"

namespace nm {

void to_json(Json& j, const PerCpu& v);
void from_json(const Json& j, PerCpu& v);
void to_json(Json& j, const KernelOption& v);
void from_json(const Json& j, KernelOption& v);
void to_json(Json& j, const CpuAccounting& v);
void from_json(const Json& j, CpuAccounting& v);

}  // namespace nm

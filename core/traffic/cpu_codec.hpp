#pragma once
// JSON of where CPU time went (json_codec_cpu.cpp): one CPU over a window, and a host's CPU-time accounting
// ({source, irq_time_accounting, cputime, no_hz_full, softirq_in_task_time}; "yes"/"no"/"unknown").
// PerCpu's codec is its field list's (cpu_types.hpp, field_json.hpp); the others are hand-written pairs,
// found by nlohmann::json through ADL.
#include "core/base/field_json.hpp"
#include "core/traffic/cpu_types.hpp"

namespace nm {

NM_JSON_CODEC(KernelOption);
NM_JSON_CODEC(CpuAccounting);

}  // namespace nm

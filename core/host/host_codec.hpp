#pragma once
// JSON of who the ends of a measurement are (host_codec.cpp): a host, its interface, the settings an end had,
// the build that described it. Read tolerantly: what an older file or agent did not record reads as unknown.
// The interface, its system view, idle CPUs and the tool are their field lists' (field_json.hpp); the
// pairs below are by hand, found by nlohmann::json through ADL.
#include "core/base/field_json.hpp"
#include "core/device/device_codec.hpp"
#include "core/device/tuning_codec.hpp"
#include "core/host/host_types.hpp"
#include "core/traffic/cpu_codec.hpp"

namespace nm {

NM_JSON_CODEC(EndSettings);
NM_JSON_CODEC(CpuLayout);
NM_JSON_CODEC(CpuIdleState);
NM_JSON_CODEC(HostInfo);

}  // namespace nm

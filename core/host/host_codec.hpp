#pragma once
// JSON of who the ends of a measurement are (host_codec.cpp): a host, its interface, the settings an end had,
// the build that described it. Read tolerantly: what an older file or agent did not record reads as unknown.
// One to_json/from_json pair per value type, found by nlohmann::json through ADL.
#include "core/base/cpu_codec.hpp"
#include "core/base/device_codec.hpp"
#include "core/host/host_types.hpp"
#include "core/base/json.hpp"
#include "core/base/tuning_codec.hpp"

namespace nm {

void to_json(Json& j, const EndSettings& v);
void from_json(const Json& j, EndSettings& v);
void to_json(Json& j, const InterfaceSystem& v);
void from_json(const Json& j, InterfaceSystem& v);
void to_json(Json& j, const CpuLayout& v);
void from_json(const Json& j, CpuLayout& v);
void to_json(Json& j, const CpuIdle& v);
void from_json(const Json& j, CpuIdle& v);
void to_json(Json& j, const InterfaceInfo& v);
void from_json(const Json& j, InterfaceInfo& v);
void to_json(Json& j, const HostInfo& v);
void from_json(const Json& j, HostInfo& v);
/// `commit` only when known (a build outside a git checkout has none).
void to_json(Json& j, const ToolInfo& v);
void from_json(const Json& j, ToolInfo& v);

}  // namespace nm

#pragma once
// Every codec at once, for the files not yet moved to the codec headers they use (issue 38): include the
// domain's own header instead (traffic_codec.hpp, results_codec.hpp, ...). Each declares one to_json/
// from_json pair per value type of its domain, found by nlohmann::json through ADL.
#include "core/base/comparison_codec.hpp"
#include "core/base/cpu_codec.hpp"
#include "core/base/device_codec.hpp"
#include "core/base/host_codec.hpp"
#include "core/base/journal_codec.hpp"
#include "core/base/json.hpp"
#include "core/base/lab_codec.hpp"
#include "core/base/profile_codec.hpp"
#include "core/base/results_codec.hpp"
#include "core/base/rfc2544_codec.hpp"
#include "core/base/rr_codec.hpp"
#include "core/base/sweep_codec.hpp"
#include "core/base/traffic_codec.hpp"
#include "core/base/tuning_codec.hpp"

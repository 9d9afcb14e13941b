#pragma once
// The parts of a sweep config read in files of their own (sweep_config_codec.cpp reads the rest and
// puts them together): traffic entries (traffic_entry_codec.cpp) and tuning axes
// (tuning_axis_codec.cpp). Errors as json_node.hpp's.
#include <string>
#include <vector>

#include "matrix/model/json_node.hpp"
#include "matrix/model/sweep_codec.hpp"

namespace nm::sweep_json {

/// One entry of `traffic`: a stream, request/response or rfc2544 test; named after its fields when the
/// entry gives no name.
TrafficEntry parse_traffic(const Node& n);
/// The keys an exclude rule's `traffic` match may name: any traffic entry's, of any kind of test.
std::vector<std::string> traffic_match_keys();

/// The values of tuning axis `axis` (one of kTuningAxes), each named; a name used twice is an error.
std::vector<TuningProfile> parse_axis(const std::string& axis, const Node& n);
/// One value of tuning axis `axis` as the config writes it.
Json axis_value_json(const std::string& axis, const TuningProfile& p);

}  // namespace nm::sweep_json

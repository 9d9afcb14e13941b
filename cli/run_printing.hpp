#pragma once
// How `nicmatrix run` prints a test in text mode: iperf's interval and stream lines, netperf's TCP_RR table,
// then both ends' CPU, the NIC cross-check, the profile and the socket knobs as read back.
#include <ostream>

#include "core/traffic/traffic_types.hpp"

namespace nm::cli {

/// The whole result of a run (stream, request/response, or against a stock iperf3).
void print_result(const RunResult& r, std::ostream& o);

/// One line per interval while a run is under way, from this end's running counters (`spec` resolved).
void print_live(const TestSpec& spec, const LiveInterval& i, std::ostream& o);

}  // namespace nm::cli

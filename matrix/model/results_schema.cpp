#include "matrix/model/results_schema.hpp"

#include "core/base/field_schema.hpp"
#include "core/device/tuning_types.hpp"
#include "core/host/host_types.hpp"
#include "core/profile/cpu_profile.hpp"
#include "core/traffic/rfc2544_types.hpp"
#include "core/traffic/rr_types.hpp"
#include "core/traffic/socket_types.hpp"
#include "core/traffic/traffic_types.hpp"
#include "matrix/model/sweep_types.hpp"

namespace nm {

Json results_schema_defs() {
    // Each record a results file carries that has a field list, once: (its def's name, the record, the keys
    // its codec adds by hand, as its json_fields_and_more comment says). A record not listed is written
    // inline where it appears.
    SchemaDefs defs;
    defs.def<HostInfo>("host", {"cpu_layout", "tool"})
        .def<InterfaceInfo>("interface")
        .def<ToolInfo>("tool")
        .def<MetricSummary>("summary")
        .def<ProcessCpu>("process_cpu")
        .def<SystemCpu>("system_cpu", {"busiest_cpu_busy_pct"})
        .def<PerCpu>("per_cpu")
        .def<CpuAccounting>("cpu_accounting", {"softirq_in_task_time"})
        .def<SocketKnobs>("socket_knobs", {"dscp"})
        .def<CpuProfile>("cpu_profile", {"top", "unmatched"})
        .def<TuningState>("tuning_state")
        .def<QdiscTree>("qdisc_tree")
        .def<ReceivePath>("receive_path")
        .def<Iperf3PeerFigures>("iperf3_peer", {"kind"})
        .def<ResumeInfo>("resume")
        .def<JsonStreamStats>("json_stream")
        .def<BackgroundLoad>("background")
        .def<RrStats>("rr")
        .def<LossStats>("loss")
        .def<StreamResult>("stream")
        .def<IntervalSample>("interval")
        .def<NapiStats>("napi")
        .def<Rfc2544Result>("rfc2544")
        .extras<QdiscState>({"default", "options_hex"})  // options_hex: files before issue 36 have it; not read
        .extras<CpuIdleState>({"disabled_cpus"});
    return Json{{"$defs", defs.defs()}};
}

}  // namespace nm

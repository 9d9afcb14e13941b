#pragma once
// `nicmatrix sweep CONFIG --lab vm:DUT,PEER`: the whole sweep runs inside a VM lab's guest, as `sweep --lab
// --lab-from` over the two NICs (DUT the client's end, PEER the server's), with its output streamed here and
// its results file written here.
#include <stop_token>
#include <string>
#include <vector>

#include "vmlab/guest_channel.hpp"
#include "vmlab/nic_models.hpp"

namespace nm {

/// What the host's `sweep` passes on.
struct VmSweepRequest {
    std::string lab_spec;     ///< "vm:e1000e,vmxnet3"
    std::string config_file;  ///< on the host; copied into the guest
    std::string output;       ///< the results file on the host (decided by prepare_sweep)
    std::string resume;       ///< a results file on the host to continue; "" = none
    /// Flags the guest's sweep takes as they are (-6, --precision 5, --seed 1, --time-budget 10m, --metric M,
    /// --quiet, --json-stream, --dry-run).
    std::vector<std::string> guest_flags;
    std::string lab_name;  ///< the lab to boot when none with these NICs runs ("" = nmsweep<pid>)
    std::string command;   ///< the host's command line, for the results file's run.command
};

/// The two NICs of "vm:A,B" (A under test, B the peer). Throws nm::Error (Usage) naming --lab.
std::vector<NicModel> parse_vm_lab_spec(const std::string& spec);

/// Runs the sweep in a VM lab that has both NICs on one hub (a running one, else one booted for it and
/// ended afterwards, whatever happens), streaming the guest's stdout and stderr to ours. `stop` stops the
/// guest's sweep (it restores its NICs and saves what it finished), then the lab it booted is ended.
/// Returns the guest sweep's exit status; the results file (also of an interrupted sweep) is on the host
/// at `output` when the guest wrote one. Throws nm::Error (Usage, Failed) for what fails around it.
int run_vm_sweep(const VmSweepRequest& request, std::stop_token stop, const OutputSink& on_out, const OutputSink& on_err);

}  // namespace nm

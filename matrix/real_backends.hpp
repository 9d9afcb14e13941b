#pragma once
// The one place in matrix/ that names the concrete device control, journal and traffic engine classes.
// Everything else receives the interfaces.
#include "matrix/sweep_request.hpp"

namespace nm {

/// The real parts: NetlinkDeviceControl, FileSettingsJournal, the engine's TrafficClient and its
/// in-process TrafficServer.
SweepBackends real_backends();

}  // namespace nm

#pragma once
// The one place in matrix/ that names the concrete device control, journal and traffic engine classes.
// Everything else receives the interfaces.
#include "matrix/sweep_request.hpp"

namespace nm {

/// The parts of this build: NetlinkDeviceControl, FileSettingsJournal, the engine's client and its
/// in-process TrafficServer. A factory this build lacks throws nm::Error (Failed) when called, before
/// anything is changed.
SweepBackends real_backends();

}  // namespace nm

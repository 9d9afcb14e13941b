#pragma once
// The seam through which the engine's server carries messages that are not about traffic. The server
// knows only that a control connection may open with something other than a test's "hello"; what such a
// connection means (the peer agent's settings control) is decided one layer up, in matrix/.
#include <stop_token>

#include "core/base/json.hpp"
#include "core/control/control_channel.hpp"

namespace nm {

/// Serves control connections whose first message is not "hello". Injected into TrafficServer through
/// ServerOptions::control.
class ControlHandler {
public:
    virtual ~ControlHandler() = default;

    /// Serves one connection; `first` is its first message (already decoded). Runs on a thread of its own,
    /// concurrently with tests and with other control connections; returns when the connection ends or
    /// `stop` is requested. Must not throw.
    virtual void serve_control(ControlChannel channel, Json first, std::stop_token stop) = 0;
};

}  // namespace nm

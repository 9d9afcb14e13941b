#pragma once
// An end of the measured path changed through the peer agent, like a router's "commit confirmed": the
// end journals its own originals, reverts by itself a change that is not confirmed in time, and restores
// everything when asked or when the controlling client goes away. The sweep (matrix/runner.hpp) sees
// the peer agent's client only through this interface and DeviceControl.
#include <chrono>
#include <vector>

#include "core/device/device_types.hpp"

namespace nm {

class ConfirmedEnd {
public:
    enum class Confirmation {
        Confirmed,   ///< every change since the last confirm now stands
        RolledBack,  ///< the end had already reverted them (the confirm came after their window)
    };

    virtual ~ConfirmedEnd() = default;

    /// True when the end answers on the control path within `timeout`.
    virtual bool ping(std::chrono::milliseconds timeout) = 0;

    /// Keeps the changes made since the last confirm (the newest one is named; older ones stand with
    /// it). RolledBack when the end had already reverted them. Throws nm::Error when the end cannot be
    /// told (then it reverts by itself).
    virtual Confirmation confirm() = 0;

    /// Waits until the end says it reverted the changes made since the last confirm; false when it did
    /// not within `timeout` (the end still reverts on its own, or restores when the connection drops).
    virtual bool await_rollback(std::chrono::milliseconds timeout) = 0;

    /// Puts back everything the end journalled. Throws nm::Error.
    virtual std::vector<ApplyReport> restore() = 0;

    /// False once the control connection is lost; the agent then restores its side by itself.
    virtual bool connected() const = 0;

    /// After a loss: connects and authenticates again, within `within`, and returns with the end at its
    /// original state (the agent restored it when its controller went away; reconnect asks again, once
    /// the agent lets it take control). Throws nm::Error when the end does not come back in time, or
    /// when the connection was ended because the end broke the protocol (a bad MAC, a malformed reply).
    virtual void reconnect(std::chrono::milliseconds within) = 0;
};

}  // namespace nm

#pragma once
// The command channel into a VM lab's guest: files in the 9p share. The host drops cmd/ID.sh; the guest's
// /init (scripts/vm-image.sh) moves it to run/ID/cmd and runs it with stdout, stderr and its pid in run/ID/,
// then writes its exit status to run/ID/rc. run/ID/stop asks the guest to send the command SIGTERM.
#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

namespace nm {

/// What a command in the guest did.
struct GuestCommandResult {
    int exit_code = 0;
    std::string out;       ///< its stdout (what was not passed to a sink)
    std::string err;       ///< its stderr (likewise)
    bool stopped = false;  ///< the command was asked to stop (the stop token, or its deadline)
};

/// The guest's side of `argv` as /bin/sh runs it: each argument quoted, argv[0] looked up in /usr/sbin and
/// /usr/bin before busybox's applets (the guest's ip and ethtool are the real ones).
std::string guest_script(const std::vector<std::string>& argv);

/// Receives output as it comes (a chunk of bytes, not necessarily whole lines).
using OutputSink = std::function<void(std::string_view chunk)>;

class GuestChannel {
public:
    /// `share`: the host's side of the share. `alive`: false once the guest's QEMU has ended.
    GuestChannel(std::filesystem::path share, std::function<bool()> alive);

    /// Waits until the guest's /init has mounted the share and serves commands. Throws nm::Error
    /// (Failed) when QEMU ends first or `timeout` passes, or when `stop` is requested.
    void wait_ready(std::chrono::milliseconds timeout, std::stop_token stop) const;

    /// Runs `argv` in the guest and waits for its exit status. With a sink, that stream goes to it as it
    /// comes instead of into the result. `timeout` (none: no limit) or `stop` sends the command SIGTERM, then
    /// waits up to `grace` for it to end (a sweep restores first). Throws nm::Error (Failed) when the guest
    /// ends, or the command does not end within `grace` of being stopped.
    GuestCommandResult run(const std::vector<std::string>& argv, std::optional<std::chrono::milliseconds> timeout, std::stop_token stop,
                           const OutputSink& on_out = {}, const OutputSink& on_err = {},
                           std::chrono::milliseconds grace = std::chrono::seconds(60)) const;

private:
    std::filesystem::path share_;
    std::function<bool()> alive_;
};

}  // namespace nm

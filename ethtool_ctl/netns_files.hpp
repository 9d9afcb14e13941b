#pragma once
// Files that belong to a network namespace: /sys/class/net/IF/... (sysfs shows the devices of the
// namespace it was mounted in) and /proc/sys/net/... (which follows the reading thread's namespace).
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace nm {

/// Runs `body` on a short-lived thread inside network namespace `netns` (a /run/netns name or a path;
/// "" = the caller's, run on the calling thread) with a private mount namespace whose /sys is a sysfs
/// mounted there, as `ip netns exec` does; nothing outside that thread sees the mount. An exception of
/// `body` is rethrown here. Throws nm::Error when the namespace cannot be entered.
void in_netns(const std::string& netns, const std::function<void()>& body);

/// The names in `dir` that start with `prefix` ("rx-"), sorted; none when it cannot be read.
std::vector<std::string> directory_entries(const std::string& dir, const std::string& prefix = "");

/// Reads the rest of the open file `fd` into `out`, trying a read a signal interrupted again: 0, or the
/// errno of the read that failed.
int read_to_end(int fd, std::string& out);

/// Reads a whole small file; none with `error` set to strerror when it cannot be read.
std::optional<std::string> read_small_file(const std::string& path, std::string* error = nullptr);

/// Writes `value` to a sysfs or procfs file in one write(2). Throws nm::Error naming `what` with the
/// kernel's errno (EINVAL for a value it refuses).
void write_small_file(const std::string& path, const std::string& value, const std::string& what);

/// read_small_file and write_small_file for `relative` beneath the directory `dir` ("/sys/class/net/eth0",
/// "/proc/sys", "/proc/irq"), which the file can never leave: an absolute path, "..", a NUL or a symbolic
/// link on the way is refused (openat2 with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS where the kernel has it,
/// else one component at a time with O_NOFOLLOW). Every setting file nicmatrix writes goes through these.
std::optional<std::string> read_beneath(const std::string& dir, const std::string& relative, std::string* error = nullptr);
void write_beneath(const std::string& dir, const std::string& relative, const std::string& value, const std::string& what);

}  // namespace nm

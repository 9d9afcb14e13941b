#pragma once
// Who owns a journal entry, and whether that owner still runs: a process is its pid, its start time and
// the boot it runs in (a pid alone is reused; a start time alone repeats after a reboot).
#include <optional>
#include <string>
#include <string_view>

#include "ethtool_ctl/journal_types.hpp"

namespace nm {

/// The fields of /proc/PID/stat an owner check needs.
struct ProcPidStat {
    char state = '?';         ///< field 3: R, S, D, Z (zombie), X (dead), ...
    uint64_t start_time = 0;  ///< field 22: clock ticks after boot
};

/// Parses the text of /proc/PID/stat. The command (field 2) is in parentheses and may itself hold spaces
/// and parentheses, so the fields are counted from the last ')'. None when the text is not such a line.
std::optional<ProcPidStat> parse_proc_pid_stat(std::string_view text);

/// The boot id of the running kernel (/proc/sys/kernel/random/boot_id, without its newline). Throws
/// nm::Error when it cannot be read.
std::string current_boot_id();

/// This process as an owner: pid, start time, boot id and command line. Throws nm::Error when /proc
/// cannot be read.
JournalOwner this_process();

/// Whether an owner's entries are still its business.
enum class OwnerStatus {
    Alive,        ///< the same process runs (same pid, start time and boot), not a zombie
    Gone,         ///< it exited, was killed, or its pid now belongs to another process
    EarlierBoot,  ///< it ran before the last reboot (another boot id)
};

/// Judges `owner` against /proc now.
OwnerStatus owner_status(const JournalOwner& owner);

/// The same with what /proc says passed in (pure): `boot_id` of the running kernel, and the parsed
/// /proc/PID/stat of the owner's pid, none when there is no such process.
OwnerStatus owner_status(const JournalOwner& owner, const std::string& boot_id, const std::optional<ProcPidStat>& stat);

/// "pid 1234 (nicmatrix sweep x.json --lab)" for messages.
std::string describe_owner(const JournalOwner& owner);

}  // namespace nm

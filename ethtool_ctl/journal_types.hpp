#pragma once
// Value types of the restore journal: who owns an entry, the entry itself, and what a restore did with
// it. Produced and read by ethtool_ctl's journal, printed by cli. JSON in json_codec_journal.cpp.
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "core/base/field_list.hpp"
#include "core/device/device_types.hpp"

namespace nm {

/// The process an entry belongs to. A pid alone names another process once it is reused, so the start
/// time and the boot are part of it: the owner is alive only while a process with that pid, that start
/// time and that boot id runs.
struct JournalOwner {
    int32_t pid = 0;          ///< 0 = unknown (never alive)
    uint64_t start_time = 0;  ///< field 22 of /proc/PID/stat: clock ticks after boot at which it started
    std::string boot_id;      ///< /proc/sys/kernel/random/boot_id of the boot it ran in
    std::string command;      ///< its command line, for people (at most 200 bytes)

    bool operator==(const JournalOwner& o) const { return pid == o.pid && start_time == o.start_time && boot_id == o.boot_id; }
};

constexpr auto json_fields(const JournalOwner*) {
    using S = JournalOwner;
    return field_list(field("pid", &S::pid), field("start_time", &S::start_time), field("boot_id", &S::boot_id), field("command", &S::command));
}

/// One setting nicmatrix changed, keyed as setting_values() keys them ("mtu", "features.rx-gro-hw",
/// "rps.rx-0", "sysctl.net.ipv4.tcp_rmem", "qdisc"), each value in its canonical text.
struct SettingWrite {
    std::string before;                  ///< the value before nicmatrix's first write
    std::optional<std::string> written;  ///< what its last write left, read back; none while a write is in flight
    std::optional<std::string> writing;  ///< the value a write in flight asks (set before it, cleared after)

    bool operator==(const SettingWrite& o) const { return before == o.before && written == o.written && writing == o.writing; }
};

constexpr auto json_fields(const SettingWrite*) {
    using S = SettingWrite;
    return field_list(field("before", &S::before, kFieldRequired), field("written", &S::written, kFieldOmitEmpty),
                      field("writing", &S::writing, kFieldOmitEmpty));
}
using SettingWrites = std::map<std::string, SettingWrite>;

/// What an entry journals: one interface's own settings, or the namespace-wide settings (sysctls) of one
/// network namespace, which have one owner entry per namespace, whichever interface's change wrote them.
enum class JournalScope { Interface, Netns };

/// One interface's (or namespace's) settings as nicmatrix found and changed them, and whose they are.
struct JournalEntry {
    JournalOwner owner;
    LinkState original;  ///< read before the first change: the identity (a Netns entry: only the namespace's)
    std::string where;   ///< the namespace for people: its /run/netns name, or "" for the one of PID 1
    JournalScope scope = JournalScope::Interface;
    SettingWrites writes;  ///< every setting this entry's owner changed: restore puts back only these
    bool legacy = false;   ///< read from a v2 file (no writes): restored by comparing with `original`
};

/// The codec adds "scope" ("interface" or "netns", checked) and "legacy" (written only when true).
constexpr auto json_fields_and_more(const JournalEntry*) {
    using S = JournalEntry;
    return field_list(field("owner", &S::owner), field("where", &S::where), field("original", &S::original, kFieldRequired),
                      field("writes", &S::writes));
}

/// What a restore did with one entry.
enum class JournalAction {
    Restored,   ///< put back, read back, holds: the entry is gone
    LeftAlone,  ///< its owner still runs and restores it itself: not touched (restore --force takes it)
    Kept,       ///< could not be put back now (not found, another interface, did not hold): the entry stays
    Dropped,    ///< nothing is left to put back (a veth gone with its namespace, an earlier boot): entry removed
    Forgotten,  ///< could not be put back, and removed because the caller asked (restore --forget)
};

/// One line of a restore's account.
struct JournalReport {
    JournalAction action = JournalAction::Kept;
    std::string ifname;  ///< as journalled (a new name is in the note)
    std::string where;   ///< as in JournalEntry
    JournalOwner owner;
    std::string note;                    ///< why, in words; empty for a plain Restored
    std::optional<ApplyReport> applied;  ///< what was sent, when the restore got that far
};

constexpr auto json_fields(const JournalReport*) {
    using S = JournalReport;
    return field_list(field("action", &S::action, kFieldRequired), field("ifname", &S::ifname, kFieldRequired), field("where", &S::where),
                      field("owner", &S::owner), field("note", &S::note), field("applied", &S::applied));
}

}  // namespace nm

#pragma once
// What nicmatrix wrote, setting by setting, and how to take back exactly that: the journal keeps, per
// changed setting, the value before nicmatrix's first write and the value its last write left; a restore
// writes the original back only where the setting still holds what nicmatrix wrote, and reports (never
// overwrites) one that someone else changed meanwhile (an administrator, irqbalance, tuned).
#include <map>
#include <string>
#include <string_view>

#include "core/device/device_types.hpp"
#include "ethtool_ctl/device_control.hpp"
#include "ethtool_ctl/journal_types.hpp"
#include "ethtool_ctl/link_settle.hpp"
#include "ethtool_ctl/settings_journal.hpp"

namespace nm {

/// Every setting of `state` nicmatrix can change, by key -> canonical text: "mtu"; "features.NAME" (the
/// wanted state, "on"/"off", of every changeable feature); "channels.rx", "rings.rx", "coalesce.rx-usecs";
/// "rps.rx-0", "xps.tx-0", "irq_affinity.N" (CPU lists); "napi.NAME"; "sysctl.NAME" (the namespace's);
/// "qdisc" (the root qdisc as JSON).
std::map<std::string, std::string> setting_values(const LinkState& state);

/// True for the keys of namespace-wide settings ("sysctl."), which the journal keeps per namespace.
bool namespace_wide(std::string_view key);

/// The keys `wanted` writes on an interface that is now `now`, each with its value now (`before`) and the
/// value asked (`writing`): features by kernel name, "*" spread over every queue or IRQ there is.
SettingWrites planned_writes(const LinkState& now, const LinkSettings& wanted);

/// After the write: every planned key and every key whose value moved from `before` to `after`, with
/// what `after` has as `written`.
SettingWrites finished_writes(const SettingWrites& planned, const LinkState& before, const LinkState& after);

/// Merges `update` into `into`: a key already there keeps its `before`; `written`/`writing` follow the
/// update. A key new to `into` whose update changed nothing (written == before) is not added.
void merge_writes(SettingWrites& into, const SettingWrites& update);

/// What taking back `writes` needs over the values `now`: the settings to write (each key's `before`)
/// and, in words, every key someone else changed meanwhile ("mtu is 4000 (nicmatrix wrote 9000; it was
/// 1500 before)"). A key already at its `before` needs nothing.
struct UndoPlan {
    LinkSettings back;
    std::vector<std::string> keys;  ///< the keys `back` writes
    std::string foreign;            ///< "; "-joined, empty when nobody else changed anything
};
UndoPlan plan_undo(const SettingWrites& writes, const std::map<std::string, std::string>& now);

/// Takes back `writes` on `ifname` (for namespace-wide keys alone, any interface of the namespace:
/// "lo"): writes each setting's original where it still holds what nicmatrix wrote, then reads back.
struct UndoResult {
    ApplyReport report;
    std::string foreign;      ///< settings someone else changed: left as they are, said here
    std::string differences;  ///< " key=now (was before)" for every setting put back that did not hold
};
/// With `journal`, what the undo wrote is journalled too (a rollback of one change among several keeps the
/// journal's `written` true for the final restore).
UndoResult undo_writes(DeviceControl& device, std::string_view ifname, const SettingWrites& writes, SettingsJournal* journal = nullptr);

/// Applies `wanted` with every write journalled: the planned writes before the change (so a crash in the
/// middle leaves a journal that knows what was in flight), what the change left after it. Returns the
/// report and this change's own writes (its `before` is the state just before it), for a rollback. When
/// the change throws, `partial` (if given) gets what it wrote before it failed.
struct RecordedApply {
    ApplyReport report;
    SettingWrites writes;
};
/// With a link wait, the link is waited out after the change (wait_for_link) and the report's `link` says
/// what it did; the writes are journalled as finished before the wait.
RecordedApply apply_recorded(DeviceControl& device, SettingsJournal& journal, std::string_view ifname, const LinkSettings& wanted,
                             SettingWrites* partial = nullptr, const LinkWait& link = {});

}  // namespace nm

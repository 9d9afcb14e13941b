#include "ethtool_ctl/file_settings_journal.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "core/base/atomic_file.hpp"
#include "core/base/error.hpp"
#include "core/base/unique_fd.hpp"
#include "core/device/device_codec.hpp"
#include "core/device/setting_rules.hpp"
#include "ethtool_ctl/journal_codec.hpp"
#include "ethtool_ctl/journal_lock.hpp"
#include "ethtool_ctl/link_identity.hpp"
#include "ethtool_ctl/netns_files.hpp"
#include "ethtool_ctl/restore_settings.hpp"
#include "ethtool_ctl/setting_writes.hpp"

namespace nm {
namespace {

constexpr const char* kSchema = "nicmatrix/journal/v3";
constexpr const char* kSchemaV2 = "nicmatrix/journal/v2";
constexpr const char* kSchemaV1 = "nicmatrix/journal/v1";

std::string label(const std::string& ifname, const std::string& where) { return where.empty() ? ifname : ifname + " (netns " + where + ")"; }

std::string label(const JournalEntry& e) {
    if (e.scope == JournalScope::Netns) return "the sysctls of " + (e.where.empty() ? std::string("the initial namespace") : "netns " + e.where);
    return label(e.original.name, e.where);
}

bool same_netns(const LinkState& a, const LinkState& b) {
    if (a.identity.netns_ino != 0 || b.identity.netns_ino != 0) return a.identity.same_netns(b.identity);
    return a.netns == b.netns;
}

// The namespace part of `link`, as a Netns entry keeps it.
LinkState netns_of(const LinkState& link) {
    LinkState s;
    s.netns = link.netns;
    s.identity.netns_dev = link.identity.netns_dev;
    s.identity.netns_ino = link.identity.netns_ino;
    return s;
}

// A journal names files that root writes: one another user could have written is refused.
void check_owner(int fd, const std::string& path) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) throw system_error("read journal " + path, errno);
    if (st.st_uid != ::geteuid()) {
        throw Error(ErrorKind::Refused, "read journal " + path + ": owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " +
                                            std::to_string(::geteuid()) + "); refusing it (a journal names what is written as root)");
    }
    if ((st.st_mode & 022) != 0) {
        throw Error(
            ErrorKind::Refused, "read journal " + path + ": writable by group or others (mode " + [&] {
                char buf[8];
                std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(st.st_mode & 07777));
                return std::string(buf);
            }() + "); refusing it (a journal names what is written as root)");
    }
}

// Every name in an entry passes the same checks as a request (core/device/setting_rules.hpp).
void check_entry(const JournalEntry& e, const std::string& path) {
    try {
        if (e.scope == JournalScope::Interface && !interface_name_ok(e.original.name) && e.original.name.find("\xEF\xBF\xBD") == std::string::npos) {
            throw usage_error("\"" + e.original.name + "\" is not an interface name");
        }
        check_tuning_state(e.original.tuning, "original.tuning");
        for (const auto& [key, w] : e.writes) {
            if (const std::string why = setting_key_problem(key); !why.empty()) throw usage_error("writes: " + why);
            if (e.scope == JournalScope::Netns && !namespace_wide(key)) throw usage_error("writes: " + key + " in a namespace's entry");
            const auto dot = key.find('.');
            const std::string kind = key.substr(0, dot), name = dot == std::string::npos ? "" : key.substr(dot + 1);
            for (const auto* v : {&w.before, w.written ? &*w.written : nullptr}) {
                if (v == nullptr || *v == "(gone)") continue;
                if (const std::string why = setting_value_problem(kind, name, *v); !why.empty()) throw usage_error("writes." + key + ": " + why);
            }
        }
    } catch (const Error& err) {
        throw Error(ErrorKind::Failed, "read journal " + path + ": entry of " + label(e) + ": " + err.what());
    }
}

// Reads the whole file without following a symbolic link planted at its path. Empty when it does not exist.
std::optional<std::string> read_file(const std::string& path) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!fd) {
        if (errno == ENOENT) return std::nullopt;
        if (errno == ELOOP) throw Error(ErrorKind::Refused, "read journal " + path + ": it is a symbolic link; refusing to follow it");
        throw system_error("read journal " + path, errno);
    }
    check_owner(fd.get(), path);
    std::string text;
    if (const int err = read_to_end(fd.get(), text); err != 0) throw system_error("read journal " + path, err);
    return text;
}

// A name as the journal file keeps it: bytes that are not UTF-8 become U+FFFD.
std::string as_journalled(const std::string& name) {
    return Json::parse(Json(name).dump(-1, ' ', false, Json::error_handler_t::replace)).get<std::string>();
}

JournalReport report_for(const JournalEntry& e, JournalAction action, std::string note) {
    JournalReport r;
    r.action = action;
    r.ifname = e.original.name;
    r.where = e.where;
    r.owner = e.owner;
    r.note = std::move(note);
    return r;
}

}  // namespace

FileSettingsJournal::FileSettingsJournal(std::string path, std::shared_ptr<JournalSystem> system)
    : path_(path.empty() ? default_path() : std::move(path)), system_(system ? std::move(system) : real_journal_system()) {}

std::string FileSettingsJournal::default_path() {
    const char* env = std::getenv("NICMATRIX_JOURNAL");
    return env != nullptr && *env != '\0' ? std::string(env) : std::string("/run/nicmatrix/journal.json");
}

std::string FileSettingsJournal::default_agent_path() { return "/run/nicmatrix/agent-journal.json"; }

std::vector<std::string> FileSettingsJournal::agent_journals_in(const std::string& dir) {
    std::vector<std::string> out;
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return out;
    while (const dirent* e = ::readdir(d)) {
        const std::string name = e->d_name;
        const bool json = name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0;
        if (name.rfind("agent", 0) == 0 && json) out.push_back(dir + "/" + name);
    }
    ::closedir(d);
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<std::string> FileSettingsJournal::default_paths() {
    std::vector<std::string> out{default_path(), default_agent_path()};
    for (auto& p : agent_journals_in(parent_directory(default_agent_path()))) out.push_back(std::move(p));
    std::vector<std::string> unique;
    for (auto& p : out) {
        if (std::find(unique.begin(), unique.end(), p) == unique.end()) unique.push_back(std::move(p));
    }
    return unique;
}

std::vector<JournalEntry> FileSettingsJournal::entries() const {
    const auto text = read_file(path_);
    if (!text) return {};
    try {
        const Json j = Json::parse(*text);
        const std::string schema = j.value("schema", "");
        std::vector<JournalEntry> out;
        if (schema == kSchemaV1) {
            // The first format: no owner (so none that runs) and no identity: reported, never found by name.
            for (const auto& s : j.at("entries").get<std::vector<LinkState>>())
                out.push_back(JournalEntry{{}, s, s.netns, JournalScope::Interface, {}, true});
        } else if (schema == kSchemaV2 || schema == kSchema) {
            out = j.at("entries").get<std::vector<JournalEntry>>();
            // v2 kept the original state only, not what was written.
            if (schema == kSchemaV2) {
                for (auto& e : out) e.legacy = true;
            }
        } else {
            throw Error(ErrorKind::Failed, "read journal " + path_ + ": not a " + std::string(kSchema) + " file");
        }
        for (const auto& e : out) check_entry(e, path_);
        return out;
    } catch (const Json::exception& e) {
        throw Error(ErrorKind::Failed, "read journal " + path_ + ": " + e.what());
    }
}

void FileSettingsJournal::write(const std::vector<JournalEntry>& entries) const {
    if (entries.empty()) {
        if (::unlink(path_.c_str()) != 0 && errno != ENOENT) throw system_error("remove journal " + path_, errno);
        return;
    }
    // A name that is not UTF-8 (Linux allows any bytes) is written with U+FFFD: the identity finds it.
    const std::string text = Json{{"schema", kSchema}, {"entries", entries}}.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
    write_file_atomically(path_, text, 0600);
}

void FileSettingsJournal::remember(const LinkState& original) {
    make_directories(parent_directory(path_));
    JournalLock lock(path_, lock_wait_);
    auto all = entries();
    const JournalOwner self = system_->self();
    const std::string where = where_of(original);
    for (auto& e : all) {
        if (e.scope != JournalScope::Interface || !same_link(e.original, original)) continue;
        if (e.owner == self) return;  // the first state seen is the original
        switch (system_->status(e.owner)) {
            case OwnerStatus::Alive:
                throw Error(ErrorKind::Refused, label(e) + " is held by " + describe_owner(e.owner) +
                                                    ", which is still running and restores it when it ends (journal " + path_ +
                                                    "); wait for it or stop it (kill -TERM " + std::to_string(e.owner.pid) + "), then try again");
            case OwnerStatus::Gone:
                // Its original is older than anything read now (the state now may be that process's change).
                e.owner = self;
                write(all);
                return;
            case OwnerStatus::EarlierBoot:
                // The reboot reset the interface: what was journalled then is no original of it now.
                e = JournalEntry{self, original, where, JournalScope::Interface, {}, false};
                write(all);
                return;
        }
    }
    all.push_back(JournalEntry{self, original, where, JournalScope::Interface, {}, false});
    write(all);
}

std::string FileSettingsJournal::where_of(const LinkState& link) const {
    return !link.netns.empty() || !link.identity.known() ? link.netns : system_->describe_netns(link.identity.netns_dev, link.identity.netns_ino);
}

// The entry of `scope` for `link` this process may write into: its own, or one whose owner is gone (taken
// over with its writes, whose `before` is older than anything read now), or a new one. Throws Refused
// when a live process holds it.
JournalEntry& FileSettingsJournal::claim(std::vector<JournalEntry>& all, const LinkState& link, JournalScope scope) {
    const JournalOwner self = system_->self();
    for (auto& e : all) {
        if (e.scope != scope) continue;
        const bool same = scope == JournalScope::Interface ? same_link(e.original, link) : same_netns(e.original, link);
        if (!same) continue;
        if (e.owner == self) return e;
        switch (system_->status(e.owner)) {
            case OwnerStatus::Alive:
                throw Error(ErrorKind::Refused, label(e) + (scope == JournalScope::Netns ? " are" : " is") + " held by " + describe_owner(e.owner) +
                                                    ", which is still running and restores " + (scope == JournalScope::Netns ? "them" : "it") +
                                                    " when it ends (journal " + path_ + "); wait for it or stop it (kill -TERM " +
                                                    std::to_string(e.owner.pid) + "), then try again");
            case OwnerStatus::Gone: e.owner = self; return e;
            case OwnerStatus::EarlierBoot:
                e = JournalEntry{self, scope == JournalScope::Interface ? link : netns_of(link), where_of(link), scope, {}, false};
                return e;
        }
    }
    all.push_back(JournalEntry{self, scope == JournalScope::Interface ? link : netns_of(link), where_of(link), scope, {}, false});
    return all.back();
}

void FileSettingsJournal::record(const LinkState& link, const SettingWrites& writes) {
    SettingWrites own, shared;
    for (const auto& [key, w] : writes) (namespace_wide(key) ? shared : own)[key] = w;
    make_directories(parent_directory(path_));
    JournalLock lock(path_, lock_wait_);
    auto all = entries();
    const auto before = all;
    // Claimed before anything is merged: a refusal leaves the file as it was.
    claim(all, link, JournalScope::Interface);
    if (!shared.empty()) claim(all, link, JournalScope::Netns);
    merge_writes(claim(all, link, JournalScope::Interface).writes, own);
    if (!shared.empty()) merge_writes(claim(all, link, JournalScope::Netns).writes, shared);
    // A namespace entry with nothing written yet is no entry.
    std::erase_if(all, [](const JournalEntry& e) { return e.scope == JournalScope::Netns && e.writes.empty(); });
    if (all.size() != before.size() || !std::equal(all.begin(), all.end(), before.begin(), [](const JournalEntry& a, const JournalEntry& b) {
            return a.owner == b.owner && a.writes == b.writes && a.scope == b.scope;
        })) {
        write(all);
    }
}

SettingWrites FileSettingsJournal::writes(const LinkState& link) {
    SettingWrites out;
    const JournalOwner self = system_->self();
    for (const auto& e : entries()) {
        if (!(e.owner == self)) continue;
        const bool ours = e.scope == JournalScope::Interface ? same_link(e.original, link) : same_netns(e.original, link);
        if (ours) out.insert(e.writes.begin(), e.writes.end());
    }
    return out;
}

void FileSettingsJournal::release(const LinkState& original) {
    if (!read_file(path_)) return;
    JournalLock lock(path_, lock_wait_);
    auto all = entries();
    const JournalOwner self = system_->self();
    const auto before = all.size();
    std::erase_if(all,
                  [&](const JournalEntry& e) { return e.owner == self && e.scope == JournalScope::Interface && same_link(e.original, original); });
    // The namespace's entry goes with the last of this process's interfaces in that namespace.
    const bool others = std::any_of(all.begin(), all.end(), [&](const JournalEntry& e) {
        return e.owner == self && e.scope == JournalScope::Interface && same_netns(e.original, original);
    });
    if (!others)
        std::erase_if(all,
                      [&](const JournalEntry& e) { return e.owner == self && e.scope == JournalScope::Netns && same_netns(e.original, original); });
    if (all.size() != before) write(all);
}

std::vector<JournalReport> FileSettingsJournal::restore(const RestoreOptions& options) {
    if (!read_file(path_)) return {};
    JournalLock lock(path_, lock_wait_);
    const auto all = entries();
    const JournalOwner self = system_->self();
    std::vector<JournalEntry> kept;
    std::vector<JournalReport> reports;
    for (const auto& e : all) {
        const OwnerStatus status = e.owner == self ? OwnerStatus::Alive : system_->status(e.owner);
        JournalReport r;
        if (status == OwnerStatus::EarlierBoot) {
            r = report_for(e, JournalAction::Dropped,
                           label(e) + " was journalled before the last reboot (boot " + e.owner.boot_id +
                               "), which reset the interface: not restored; entry dropped");
        } else if (status == OwnerStatus::Alive && !(e.owner == self) && !options.force) {
            r = report_for(e, JournalAction::LeftAlone,
                           "left alone: held by " + describe_owner(e.owner) +
                               ", which is still running and restores it when it ends (restore --force takes it anyway)");
        } else {
            try {
                r = restore_entry(e);
            } catch (const std::exception& ex) {
                r = report_for(e, JournalAction::Kept, std::string("restore failed: ") + ex.what() + "; entry kept");
            }
        }
        if (r.action == JournalAction::Kept && options.forget) {
            r.action = JournalAction::Forgotten;
            r.note += " -- forgotten (--forget): entry removed";
        }
        if (r.action == JournalAction::Kept || r.action == JournalAction::LeftAlone) kept.push_back(e);
        reports.push_back(std::move(r));
    }
    if (kept.size() != all.size()) write(kept);
    return reports;
}

JournalReport FileSettingsJournal::put_back_found(const JournalEntry& e, DeviceControl& device, const LinkState& now, const std::string& how) {
    std::string note = how;
    if (how.empty() && as_journalled(now.name) != e.original.name) note = label(e) + " is now named " + now.name;
    PutBack done;
    if (e.legacy) {
        // A v2 entry knows the original state but not what was written: everything that differs goes back.
        done = put_back(device, now.name, e.original);
        note +=
            std::string(note.empty() ? "" : "; ") + "an entry of an older journal (v2): every setting that differed from its original was put back";
    } else {
        UndoResult undo = undo_writes(device, now.name, e.writes);
        done.report = std::move(undo.report);
        done.differences = std::move(undo.differences);
        if (!undo.foreign.empty()) note += std::string(note.empty() ? "" : "; ") + "changed since by someone else, left as it is: " + undo.foreign;
    }
    JournalReport r = report_for(e, JournalAction::Restored, note);
    r.applied = done.report;
    if (!done.differences.empty()) {
        r.action = JournalAction::Kept;
        r.note = (note.empty() ? "" : note + "; ") + "restore did not hold on " + label(now.name, e.where) + ":" + done.differences + "; entry kept";
    }
    return r;
}

JournalReport FileSettingsJournal::restore_entry(const JournalEntry& e) {
    const LinkState& o = e.original;
    const LinkIdentity& id = o.identity;
    const std::string forget_hint = "; entry kept (restore --forget drops it)";

    if (e.scope == JournalScope::Netns) return restore_netns_entry(e);
    if (!id.known()) {
        // The first journal format knew names only: an interface of that name now may be another one.
        return report_for(e, JournalAction::Kept,
                          label(e) +
                              ": an entry of the first journal format (v1), which has no identity to find the interface by; "
                              "not matched by name: check it by hand" +
                              forget_hint);
    }

    const std::string initial = system_->initial_netns();
    const auto where = system_->find_netns(id.netns_dev, id.netns_ino);
    if (where) {
        auto device = system_->control(*where);
        if (const auto now = find_link(*device, o, same_interface)) return put_back_found(e, *device, *now, "");
        if (has_hardware_identity(o) && *where != initial) {
            auto home = system_->control(initial);
            if (const auto now = find_link(*home, o, same_hardware)) {
                return put_back_found(e, *home, *now, label(e) + " was moved to the initial namespace, as " + now->name);
            }
        }
        return report_for(e, JournalAction::Kept,
                          label(e) + ": no interface in its namespace is the one journalled (ifindex " + std::to_string(id.ifindex) +
                              (id.kind.empty() ? "" : ", " + id.kind) + (id.perm_address.empty() ? "" : ", " + id.perm_address) +
                              "): deleted, or moved to another namespace?" + forget_hint);
    }
    // Deleting a namespace destroys its virtual devices (those with a link kind) and returns the others,
    // physical NICs, to the initial namespace, possibly under another name and index.
    if (!id.kind.empty()) {
        return report_for(e, JournalAction::Dropped,
                          "netns " + (e.where.empty() ? "of " + o.name : e.where) + " is gone, and the " + id.kind + " interface " + o.name +
                              " went with it; entry dropped");
    }
    if (has_hardware_identity(o)) {
        auto home = system_->control(initial);
        if (const auto now = find_link(*home, o, same_hardware)) {
            return put_back_found(e, *home, *now,
                                  label(e) + ": its namespace is gone; the device came back to the initial namespace as " + now->name);
        }
        return report_for(e, JournalAction::Kept,
                          label(e) + ": its namespace is gone and no interface of the initial namespace has its " +
                              (id.perm_address.empty() ? "bus info " + o.driver.bus_info : "permanent address " + id.perm_address) + forget_hint);
    }
    return report_for(e, JournalAction::Kept,
                      label(e) + ": its namespace is gone, and it has no permanent address or bus info to find it by" + forget_hint);
}

}  // namespace nm

namespace nm {

JournalReport FileSettingsJournal::restore_netns_entry(const JournalEntry& e) {
    const LinkIdentity& id = e.original.identity;
    const auto where = system_->find_netns(id.netns_dev, id.netns_ino);
    if (!where) return report_for(e, JournalAction::Dropped, label(e) + ": the namespace is gone, and its sysctls with it; entry dropped");
    auto device = system_->control(*where);
    // The namespace's loopback is there as long as the namespace is: its reading has the namespace's sysctls.
    UndoResult undo = undo_writes(*device, "lo", e.writes);
    JournalReport r =
        report_for(e, JournalAction::Restored, undo.foreign.empty() ? "" : "changed since by someone else, left as it is: " + undo.foreign);
    r.ifname = "";
    r.applied = std::move(undo.report);
    if (!undo.differences.empty()) {
        r.action = JournalAction::Kept;
        r.note = (r.note.empty() ? "" : r.note + "; ") + "restore did not hold on " + label(e) + ":" + undo.differences + "; entry kept";
    }
    return r;
}

}  // namespace nm

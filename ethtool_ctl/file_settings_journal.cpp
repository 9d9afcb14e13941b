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
#include "core/base/json_codec.hpp"
#include "core/base/unique_fd.hpp"
#include "ethtool_ctl/journal_lock.hpp"
#include "ethtool_ctl/link_identity.hpp"
#include "ethtool_ctl/restore_settings.hpp"

namespace nm {
namespace {

constexpr const char* kSchema = "nicmatrix/journal/v2";
constexpr const char* kSchemaV1 = "nicmatrix/journal/v1";

std::string label(const std::string& ifname, const std::string& where) {
    return where.empty() ? ifname : ifname + " (netns " + where + ")";
}

std::string label(const JournalEntry& e) { return label(e.original.name, e.where); }

// Reads the whole file without following a symbolic link planted at its path. Empty when it does not exist.
std::optional<std::string> read_file(const std::string& path) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!fd) {
        if (errno == ENOENT) return std::nullopt;
        if (errno == ELOOP) throw Error(ErrorKind::Refused, "read journal " + path + ": it is a symbolic link; refusing to follow it");
        throw system_error("read journal " + path, errno);
    }
    std::string text;
    char buf[8192];
    for (;;) {
        const ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw system_error("read journal " + path, errno);
        }
        if (n == 0) break;
        text.append(buf, static_cast<size_t>(n));
    }
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
        if (schema == kSchemaV1) {
            // The previous format: no owner (so none that runs) and no identity (found by names).
            std::vector<JournalEntry> out;
            for (const auto& s : j.at("entries").get<std::vector<LinkState>>()) out.push_back(JournalEntry{{}, s, s.netns});
            return out;
        }
        if (schema != kSchema) throw Error(ErrorKind::Failed, "read journal " + path_ + ": not a " + std::string(kSchema) + " file");
        return j.at("entries").get<std::vector<JournalEntry>>();
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
    const std::string where = !original.netns.empty() || !original.identity.known()
                                  ? original.netns
                                  : system_->describe_netns(original.identity.netns_dev, original.identity.netns_ino);
    for (auto& e : all) {
        if (!same_link(e.original, original)) continue;
        if (e.owner == self) return;   // the first state seen is the original
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
                e = JournalEntry{self, original, where};
                write(all);
                return;
        }
    }
    all.push_back(JournalEntry{self, original, where});
    write(all);
}

void FileSettingsJournal::release(const LinkState& original) {
    if (!read_file(path_)) return;
    JournalLock lock(path_, lock_wait_);
    auto all = entries();
    const JournalOwner self = system_->self();
    const auto before = all.size();
    std::erase_if(all, [&](const JournalEntry& e) { return e.owner == self && same_link(e.original, original); });
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

JournalReport FileSettingsJournal::put_back_found(const JournalEntry& e, DeviceControl& device, const LinkState& now,
                                                  const std::string& how) {
    const PutBack done = put_back(device, now.name, e.original);
    std::string note = how;
    if (how.empty() && as_journalled(now.name) != e.original.name) note = label(e) + " is now named " + now.name;
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

    if (!id.known()) {
        // An older journal's entry: only the names are known. A named namespace that is gone took its
        // (virtual) interfaces with it, which is what that format's restores assumed.
        std::unique_ptr<DeviceControl> device;
        try {
            device = system_->control(o.netns);
        } catch (const Error& err) {
            if (err.kind() != ErrorKind::Usage) throw;
            return report_for(e, JournalAction::Dropped, "netns " + o.netns + " no longer exists; entry dropped");
        }
        const auto by_name = [](const LinkState& a, const LinkState& b) { return a.name == b.name; };
        if (const auto now = find_link(*device, o, +by_name)) return put_back_found(e, *device, *now, "");
        return report_for(e, JournalAction::Kept, "interface " + label(e) + " not found" + forget_hint);
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
    return report_for(e, JournalAction::Kept, label(e) + ": its namespace is gone, and it has no permanent address or bus info to find it by" + forget_hint);
}

}  // namespace nm

#include "ethtool_ctl/file_settings_journal.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/base/error.hpp"
#include "core/base/json_codec.hpp"
#include "core/base/unique_fd.hpp"
#include "ethtool_ctl/netlink_device_control.hpp"
#include "ethtool_ctl/netns.hpp"

namespace nm {
namespace {

constexpr const char* kSchema = "nicmatrix/journal/v1";

std::string parent_dir(const std::string& path) {
    const auto slash = path.rfind('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

void make_dirs(const std::string& dir) {
    if (dir.empty() || dir == "/" || dir == ".") return;
    make_dirs(parent_dir(dir));
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) throw system_error("create journal directory " + dir, errno);
}

void write_all(int fd, const std::string& text, const std::string& path) {
    size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw system_error("write " + path, errno);
        }
        done += static_cast<size_t>(n);
    }
}

void fsync_dir(const std::string& dir) {
    UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd) throw system_error("open directory " + dir, errno);
    if (::fsync(fd.get()) != 0) throw system_error("fsync directory " + dir, errno);
}

// Serialises read-modify-write of the journal between processes (a sweep and a `set` at the same time);
// the lock file sits next to the journal and is never removed, so every process locks the same inode.
class JournalLock {
public:
    explicit JournalLock(const std::string& path) : fd_(::open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600)) {
        if (!fd_) throw system_error("open " + path + ".lock", errno);
        while (::flock(fd_.get(), LOCK_EX) != 0) {
            if (errno != EINTR) throw system_error("lock " + path + ".lock", errno);
        }
    }

private:
    UniqueFd fd_;
};

bool same_link(const LinkState& a, const LinkState& b) { return a.netns == b.netns && a.name == b.name; }

std::string label(const LinkState& s) { return s.netns.empty() ? s.name : s.name + " (netns " + s.netns + ")"; }

// What to send to put `original` back over `now`: the MTU and every changeable feature whose wanted
// state moved. Features the running kernel no longer has, or cannot change, are left out.
LinkSettings restore_settings(const LinkState& original, const LinkState& now) {
    LinkSettings s;
    s.mtu = original.mtu;
    for (const auto& [name, was] : original.features) {
        const auto it = now.features.find(name);
        if (was.fixed || it == now.features.end() || it->second.fixed) continue;
        if (it->second.wanted != was.wanted) s.features[name] = was.wanted;
    }
    return s;
}

// The differences that keep a restore from holding, as text; empty when it holds.
std::string differences(const LinkState& original, const LinkState& now) {
    std::string out;
    if (now.mtu != original.mtu) out += " mtu=" + std::to_string(now.mtu) + " (was " + std::to_string(original.mtu) + ")";
    for (const auto& [name, was] : original.features) {
        const auto it = now.features.find(name);
        if (was.fixed || it == now.features.end()) continue;
        if (it->second.wanted != was.wanted || it->second.active != was.active) {
            out += " " + name + "=" + (it->second.active ? "on" : "off");
        }
    }
    return out;
}

}  // namespace

FileSettingsJournal::FileSettingsJournal(std::string path, ControlFactory factory)
    : path_(path.empty() ? default_path() : std::move(path)), factory_(std::move(factory)) {
    if (!factory_) {
        factory_ = [](const std::string& netns) -> std::unique_ptr<DeviceControl> {
            return std::make_unique<NetlinkDeviceControl>(netns);
        };
    }
}

std::string FileSettingsJournal::default_path() {
    const char* env = std::getenv("NICMATRIX_JOURNAL");
    return env != nullptr && *env != '\0' ? std::string(env) : std::string("/run/nicmatrix/journal.json");
}

std::vector<LinkState> FileSettingsJournal::entries() const {
    struct stat st {};
    if (::stat(path_.c_str(), &st) != 0) {
        if (errno == ENOENT) return {};
        throw system_error("read journal " + path_, errno);
    }
    std::ifstream in(path_);
    if (!in) throw Error(ErrorKind::Failed, "read journal " + path_ + ": cannot open it");
    std::stringstream text;
    text << in.rdbuf();
    try {
        const Json j = Json::parse(text.str());
        if (j.value("schema", "") != kSchema) {
            throw Error(ErrorKind::Failed, "read journal " + path_ + ": not a " + std::string(kSchema) + " file");
        }
        return j.at("entries").get<std::vector<LinkState>>();
    } catch (const Json::exception& e) {
        throw Error(ErrorKind::Failed, "read journal " + path_ + ": " + e.what());
    }
}

void FileSettingsJournal::write(const std::vector<LinkState>& entries) const {
    const std::string dir = parent_dir(path_);
    if (entries.empty()) {
        if (::unlink(path_.c_str()) != 0 && errno != ENOENT) throw system_error("remove journal " + path_, errno);
        fsync_dir(dir);
        return;
    }
    make_dirs(dir);
    const std::string tmp = path_ + ".tmp." + std::to_string(::getpid());
    {
        UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
        if (!fd) throw system_error("create " + tmp, errno);
        write_all(fd.get(), Json{{"schema", kSchema}, {"entries", entries}}.dump(2) + "\n", tmp);
        if (::fsync(fd.get()) != 0) throw system_error("fsync " + tmp, errno);
    }
    if (::rename(tmp.c_str(), path_.c_str()) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        throw system_error("rename " + tmp + " to " + path_, err);
    }
    fsync_dir(dir);
}

void FileSettingsJournal::remember(const LinkState& original) {
    make_dirs(parent_dir(path_));
    JournalLock lock(path_);
    auto all = entries();
    for (const auto& e : all) {
        if (same_link(e, original)) return;  // the first state seen is the original
    }
    all.push_back(original);
    write(all);
}

std::vector<ApplyReport> FileSettingsJournal::restore() {
    if (entries().empty()) return {};
    JournalLock lock(path_);
    auto all = entries();
    std::vector<LinkState> kept;
    std::vector<ApplyReport> reports;
    for (const auto& original : all) {
        ApplyReport report;
        report.ifname = original.name;
        report.netns = original.netns;
        if (!original.netns.empty() && !netns_exists(original.netns)) {
            report.note = "netns " + original.netns + " no longer exists; entry dropped";
            reports.push_back(report);
            continue;
        }
        try {
            auto control = factory_(original.netns);
            LinkState now;
            try {
                now = control->read(original.name);
            } catch (const Error& e) {
                if (e.kind() != ErrorKind::Usage) throw;
                report.note = "interface " + label(original) + " no longer exists; entry dropped";
                reports.push_back(report);
                continue;
            }
            report = control->apply(original.name, restore_settings(original, now));
            const std::string diff = differences(original, control->read(original.name));
            if (!diff.empty()) {
                report.note = "restore did not hold on " + label(original) + ":" + diff + "; entry kept";
                kept.push_back(original);
            }
        } catch (const Error& e) {
            report.note = std::string("restore failed: ") + e.what() + "; entry kept";
            kept.push_back(original);
        }
        reports.push_back(report);
    }
    if (!all.empty()) write(kept);
    return reports;
}

}  // namespace nm

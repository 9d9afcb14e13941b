#include "ethtool_ctl/netns.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <thread>

#include "core/base/error.hpp"
#include "core/base/thread_entry.hpp"

namespace nm {
namespace {

constexpr const char* kNetnsRunDir = "/run/netns";

std::string netns_path(std::string_view name) { return std::string(kNetnsRunDir) + "/" + std::string(name); }

// Same preparation as iproute2's netns_add: /run/netns must be a shared mount point so that the bind
// mounts below propagate into mount namespaces created later (`ip netns exec` makes one).
void prepare_run_dir() {
    if (::mkdir(kNetnsRunDir, 0755) != 0 && errno != EEXIST) throw system_error("create " + std::string(kNetnsRunDir), errno);
    bool bound_onto_itself = false;
    while (::mount("", kNetnsRunDir, "none", MS_SHARED | MS_REC, nullptr) != 0) {
        if (errno != EINVAL || bound_onto_itself) throw system_error("make /run/netns a shared mount", errno);
        if (::mount(kNetnsRunDir, kNetnsRunDir, "none", MS_BIND | MS_REC, nullptr) != 0) {
            throw system_error("bind-mount /run/netns onto itself", errno);
        }
        bound_onto_itself = true;
    }
}

}  // namespace

void validate_netns_name(std::string_view name) {
    const bool bad = name.empty() || name.size() > 200 || name == "." || name == ".." || name.find('/') != std::string_view::npos ||
                     name.find('\0') != std::string_view::npos;
    if (bad) throw usage_error("netns: invalid namespace name \"" + std::string(name) + "\"");
}

bool netns_exists(std::string_view name) {
    struct stat st {};
    return ::stat(netns_path(name).c_str(), &st) == 0;
}

std::vector<std::string> list_netns() {
    std::vector<std::string> names;
    DIR* dir = ::opendir(kNetnsRunDir);
    if (dir == nullptr) return names;
    while (const dirent* entry = ::readdir(dir)) {
        const std::string name = entry->d_name;
        if (name != "." && name != "..") names.push_back(name);
    }
    ::closedir(dir);
    std::sort(names.begin(), names.end());
    return names;
}

void create_netns(std::string_view name) {
    validate_netns_name(name);
    prepare_run_dir();
    const std::string path = netns_path(name);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CREAT | O_EXCL, 0);
    if (fd < 0) {
        if (errno == EEXIST) throw usage_error("netns " + std::string(name) + " already exists");
        throw system_error("create " + path, errno);
    }
    ::close(fd);

    // unshare() moves only the calling thread, so do it on a short-lived thread and keep ours untouched.
    int failed_errno = 0;
    std::string failed_step;
    std::thread worker([&] {
        guarded(
            [&] {
                if (::unshare(CLONE_NEWNET) != 0) {
                    failed_errno = errno;
                    failed_step = "unshare(CLONE_NEWNET)";
                    return;
                }
                if (::mount("/proc/thread-self/ns/net", path.c_str(), "none", MS_BIND, nullptr) != 0) {
                    failed_errno = errno;
                    failed_step = "bind-mount the new namespace on " + path;
                }
            },
            [&](const std::string& what) {
                failed_errno = EIO;
                failed_step = what;
            });
    });
    worker.join();
    if (failed_errno != 0) {
        ::unlink(path.c_str());
        throw system_error("create netns " + std::string(name) + ": " + failed_step, failed_errno);
    }
}

bool delete_netns(std::string_view name) {
    validate_netns_name(name);
    const std::string path = netns_path(name);
    if (!netns_exists(name)) return false;
    if (::umount2(path.c_str(), MNT_DETACH) != 0 && errno != EINVAL) throw system_error("unmount " + path, errno);
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) throw system_error("remove " + path, errno);
    return true;
}

UniqueFd open_netns(std::string_view name) {
    const bool is_path = !name.empty() && name.front() == '/';
    if (!is_path) validate_netns_name(name);
    UniqueFd fd(::open(is_path ? std::string(name).c_str() : netns_path(name).c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) {
        if (errno == ENOENT) throw usage_error("netns " + std::string(name) + " does not exist");
        throw system_error("open netns " + std::string(name), errno);
    }
    return fd;
}

NetnsId current_netns_id() {
    const auto id = netns_id_of("/proc/thread-self/ns/net");
    if (!id) throw system_error("stat /proc/thread-self/ns/net", errno);
    return *id;
}

std::optional<NetnsId> socket_netns_id(int fd) {
    UniqueFd ns(::ioctl(fd, SIOCGSKNS));
    struct stat st {};
    if (!ns || ::fstat(ns.get(), &st) != 0) return std::nullopt;
    return NetnsId{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
}

std::optional<NetnsId> netns_id_of(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return std::nullopt;
    return NetnsId{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
}

std::string netns_name_of(NetnsId id) {
    for (const auto& name : list_netns()) {
        if (netns_id_of(netns_path(name)) == id) return name;
    }
    return "";
}

std::optional<std::string> find_netns(NetnsId id) {
    if (netns_id_of("/proc/thread-self/ns/net") == id) return std::string();
    if (auto name = netns_name_of(id); !name.empty()) return name;
    // A namespace without a name lives as long as a process (or an open file) holds it: look through
    // every process's /proc/PID/ns/net. Open files held without a process cannot be found this way.
    DIR* dir = ::opendir("/proc");
    if (dir == nullptr) return std::nullopt;
    std::optional<std::string> found;
    while (const dirent* entry = ::readdir(dir)) {
        const std::string pid = entry->d_name;
        if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
        const std::string path = "/proc/" + pid + "/ns/net";
        if (netns_id_of(path) == id) {
            found = path;
            break;
        }
    }
    ::closedir(dir);
    return found;
}

NetnsScope::NetnsScope(std::string_view name) {
    if (name.empty()) return;
    UniqueFd target = open_netns(name);
    UniqueFd original(::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
    if (!original) throw system_error("open this thread's netns", errno);
    if (::setns(target.get(), CLONE_NEWNET) != 0) throw system_error("enter netns " + std::string(name), errno);
    original_ = std::move(original);
}

NetnsScope::~NetnsScope() {
    // Going back cannot fail for a namespace we came from while it is held open; if it ever did, the
    // thread would act in the wrong namespace, which is worse than stopping.
    if (original_ && ::setns(original_.get(), CLONE_NEWNET) != 0) std::terminate();
}

}  // namespace nm

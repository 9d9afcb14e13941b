#include "ethtool_ctl/netns_files.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <thread>
#include <utility>

#include "core/base/error.hpp"
#include "core/base/unique_fd.hpp"
#include "ethtool_ctl/netns.hpp"

namespace nm {
namespace {

// The network namespace (device, inode) of a /proc/.../ns/net link; {0, 0} when it cannot be read.
std::pair<dev_t, ino_t> netns_of(const char* link) {
    struct stat st {};
    if (::stat(link, &st) != 0) return {0, 0};
    return {st.st_dev, st.st_ino};
}

// The namespace the process started in, whose devices its /sys shows (as after `ip netns exec`). Taken
// when the program loads, before any thread can enter another.
const std::pair<dev_t, ino_t> kStartNetns = netns_of("/proc/self/ns/net");

}  // namespace

void in_netns(const std::string& netns, const std::function<void()>& body) {
    std::string where = netns;
    if (where.empty()) {
        // The caller's namespace. Its /sys is the process's only if the thread has not entered another
        // namespace since the start (NetnsScope, setns): then sysfs is mounted afresh for it too.
        const auto now = netns_of("/proc/thread-self/ns/net");
        if (now == kStartNetns || now.second == 0) {
            body();
            return;
        }
        where = "/proc/thread-self/ns/net";  // opened below, on the calling thread
    }
    UniqueFd target = open_netns(where);
    std::exception_ptr failure;
    // The thread changes its namespaces for good and then ends: no other thread is affected, and nothing
    // has to be switched back. CLONE_NEWNS is unshared per thread (it implies CLONE_FS only).
    std::thread worker([&] {
        try {
            if (::setns(target.get(), CLONE_NEWNET) != 0) throw system_error("enter netns " + where, errno);
            if (::unshare(CLONE_NEWNS) != 0) throw system_error("unshare the mount namespace for netns " + where, errno);
            // Slave: the sysfs mounted below must not propagate back into the host's mounts.
            if (::mount("none", "/", nullptr, MS_SLAVE | MS_REC, nullptr) != 0) throw system_error("make / a slave mount", errno);
            ::umount2("/sys", MNT_DETACH);
            if (::mount("sysfs", "/sys", "sysfs", 0, nullptr) != 0) throw system_error("mount sysfs for netns " + where, errno);
            body();
        } catch (...) {
            failure = std::current_exception();
        }
    });
    worker.join();
    if (failure) std::rethrow_exception(failure);
}

int read_to_end(int fd, std::string& out) {
    char buf[8192];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        if (n == 0) return 0;
        out.append(buf, static_cast<size_t>(n));
    }
}

namespace {

// The rest of `fd` (an open sysfs or procfs file) in one string; none with `error` set to strerror.
std::optional<std::string> read_all(const UniqueFd& fd, std::string* error) {
    if (!fd) {
        if (error != nullptr) *error = std::strerror(errno);
        return std::nullopt;
    }
    std::string out;
    if (const int err = read_to_end(fd.get(), out); err != 0) {
        if (error != nullptr) *error = std::strerror(err);
        return std::nullopt;
    }
    return out;
}

// `value` into `fd` in one write(2), as sysfs and procfs take a setting. `shown` is the path for messages.
void write_all(const UniqueFd& fd, const std::string& value, const std::string& what, const std::string& shown) {
    if (!fd) throw system_error("set " + what + " (" + shown + ")", errno);
    ssize_t n = 0;
    do {
        n = ::write(fd.get(), value.data(), value.size());
    } while (n < 0 && errno == EINTR);
    if (n < 0) throw system_error("set " + what + "=" + value + " (" + shown + ")", errno);
}

}  // namespace

std::optional<std::string> read_small_file(const std::string& path, std::string* error) {
    return read_all(UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)), error);
}

std::vector<std::string> directory_entries(const std::string& dir, const std::string& prefix) {
    std::vector<std::string> out;
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return out;
    while (const dirent* e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (name.rfind(prefix, 0) == 0 && name != "." && name != "..") out.push_back(name);
    }
    ::closedir(d);
    std::sort(out.begin(), out.end());
    return out;
}

namespace {

// Opens `relative` beneath `dir` (see read_beneath); -1 with errno set when it cannot.
int open_beneath(const std::string& dir, const std::string& relative, int flags) {
    if (relative.empty() || relative.front() == '/' || relative.find('\0') != std::string::npos) {
        errno = EXDEV;
        return -1;
    }
    for (size_t at = 0; at <= relative.size();) {
        const size_t slash = std::min(relative.find('/', at), relative.size());
        const std::string part = relative.substr(at, slash - at);
        if (part.empty() || part == "." || part == "..") {
            errno = EXDEV;
            return -1;
        }
        at = slash + 1;
    }
    UniqueFd base(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!base) return -1;
    open_how how{};
    how.flags = static_cast<uint64_t>(flags | O_CLOEXEC | O_NOFOLLOW);
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    const long fd = ::syscall(SYS_openat2, base.get(), relative.c_str(), &how, sizeof how);
    if (fd >= 0 || errno != ENOSYS) return static_cast<int>(fd);
    // A kernel older than 5.6: one directory at a time, none of them a symbolic link.
    UniqueFd at_dir = std::move(base);
    size_t at = 0;
    for (;;) {
        const size_t slash = relative.find('/', at);
        const std::string part = relative.substr(at, slash == std::string::npos ? std::string::npos : slash - at);
        if (slash == std::string::npos) return ::openat(at_dir.get(), part.c_str(), flags | O_CLOEXEC | O_NOFOLLOW);
        UniqueFd next(::openat(at_dir.get(), part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!next) return -1;
        at_dir = std::move(next);
        at = slash + 1;
    }
}

}  // namespace

std::optional<std::string> read_beneath(const std::string& dir, const std::string& relative, std::string* error) {
    return read_all(UniqueFd(open_beneath(dir, relative, O_RDONLY)), error);
}

void write_beneath(const std::string& dir, const std::string& relative, const std::string& value, const std::string& what) {
    write_all(UniqueFd(open_beneath(dir, relative, O_WRONLY)), value, what, dir + "/" + relative);
}

void write_small_file(const std::string& path, const std::string& value, const std::string& what) {
    write_all(UniqueFd(::open(path.c_str(), O_WRONLY | O_CLOEXEC)), value, what, path);
}

}  // namespace nm

#include "ethtool_ctl/netns_files.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <thread>

#include "core/base/error.hpp"
#include "core/base/unique_fd.hpp"
#include "ethtool_ctl/netns.hpp"

namespace nm {

void in_netns(const std::string& netns, const std::function<void()>& body) {
    if (netns.empty()) {
        body();
        return;
    }
    UniqueFd target = open_netns(netns);
    std::exception_ptr failure;
    // The thread changes its namespaces for good and then ends: no other thread is affected, and nothing
    // has to be switched back. CLONE_NEWNS is unshared per thread (it implies CLONE_FS only).
    std::thread worker([&] {
        try {
            if (::setns(target.get(), CLONE_NEWNET) != 0) throw system_error("enter netns " + netns, errno);
            if (::unshare(CLONE_NEWNS) != 0) throw system_error("unshare the mount namespace for netns " + netns, errno);
            // Slave: the sysfs mounted below must not propagate back into the host's mounts.
            if (::mount("none", "/", nullptr, MS_SLAVE | MS_REC, nullptr) != 0) throw system_error("make / a slave mount", errno);
            ::umount2("/sys", MNT_DETACH);
            if (::mount("sysfs", "/sys", "sysfs", 0, nullptr) != 0) throw system_error("mount sysfs for netns " + netns, errno);
            body();
        } catch (...) {
            failure = std::current_exception();
        }
    });
    worker.join();
    if (failure) std::rethrow_exception(failure);
}

std::optional<std::string> read_small_file(const std::string& path, std::string* error) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) {
        if (error != nullptr) *error = std::strerror(errno);
        return std::nullopt;
    }
    std::string out;
    char buf[4096];
    for (;;) {
        const ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (error != nullptr) *error = std::strerror(errno);
            return std::nullopt;
        }
        if (n == 0) break;
        out.append(buf, static_cast<size_t>(n));
    }
    return out;
}

void write_small_file(const std::string& path, const std::string& value, const std::string& what) {
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
    if (!fd) throw system_error("set " + what + " (" + path + ")", errno);
    ssize_t n = 0;
    do {
        n = ::write(fd.get(), value.data(), value.size());
    } while (n < 0 && errno == EINTR);
    if (n < 0) throw system_error("set " + what + "=" + value + " (" + path + ")", errno);
}

}  // namespace nm

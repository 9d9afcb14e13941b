#include "ethtool_ctl/journal_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <cstdio>
#include <sstream>
#include <thread>

#include "core/base/error.hpp"
#include "core/base/file_text.hpp"

namespace nm {
namespace {

constexpr auto kRetry = std::chrono::milliseconds(20);

std::string command_of(int pid) {
    std::string cmd = read_file_text("/proc/" + std::to_string(pid) + "/cmdline");
    for (char& c : cmd) {
        if (c == '\0') c = ' ';
    }
    while (!cmd.empty() && cmd.back() == ' ') cmd.pop_back();
    return cmd.size() > 120 ? cmd.substr(0, 117) + "..." : cmd;
}

// "held by pid 1234 (flock /run/nicmatrix/journal.json.lock sleep 600)", or "" when /proc/locks does not say.
std::string holders_text(int fd) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return "";
    const auto pids = lock_holders(read_file_text("/proc/locks"), major(st.st_dev), minor(st.st_dev), st.st_ino);
    std::string out;
    for (int pid : pids) {
        const std::string cmd = command_of(pid);
        out += (out.empty() ? "held by pid " : ", pid ") + std::to_string(pid) + (cmd.empty() ? "" : " (" + cmd + ")");
    }
    return out;
}

}  // namespace

std::vector<int> lock_holders(std::string_view proc_locks, unsigned major_no, unsigned minor_no, unsigned long inode) {
    std::vector<int> pids;
    std::istringstream in{std::string(proc_locks)};
    for (std::string line; std::getline(in, line);) {
        // "N: FLOCK ADVISORY WRITE PID MAJ:MIN:INODE START END"; a blocked waiter's line has "->" after N:.
        std::istringstream f(line);
        std::string number, kind, mode, access, pid, where;
        if (!(f >> number >> kind)) continue;
        if (kind == "->") continue;
        if (!(f >> mode >> access >> pid >> where)) continue;
        unsigned maj = 0, min = 0;
        unsigned long ino = 0;
        if (std::sscanf(where.c_str(), "%x:%x:%lu", &maj, &min, &ino) != 3) continue;
        if (maj == major_no && min == minor_no && ino == inode) {
            try {
                pids.push_back(std::stoi(pid));
            } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): not a pid, not a holder we can name
            }
        }
    }
    return pids;
}

JournalLock::JournalLock(const std::string& journal_path, std::chrono::milliseconds wait) {
    const std::string path = journal_path + ".lock";
    fd_ = UniqueFd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!fd_) {
        if (errno == ELOOP) throw Error(ErrorKind::Refused, "open " + path + ": it is a symbolic link; refusing to follow it");
        throw system_error("open " + path, errno);
    }
    const auto deadline = std::chrono::steady_clock::now() + wait;
    while (::flock(fd_.get(), LOCK_EX | LOCK_NB) != 0) {
        if (errno == EINTR) continue;
        if (errno != EWOULDBLOCK) throw system_error("lock " + path, errno);
        if (std::chrono::steady_clock::now() >= deadline) {
            const std::string who = holders_text(fd_.get());
            char seconds[32];
            std::snprintf(seconds, sizeof seconds, "%.1f", static_cast<double>(wait.count()) / 1000.0);
            throw Error(ErrorKind::Failed, "lock " + path + ": " + (who.empty() ? "held by another process" : who) + " for more than " + seconds +
                                               " s; if that process is stuck, stop it and try again");
        }
        // A journal update takes milliseconds: poll briefly until the deadline.
        std::this_thread::sleep_for(kRetry);
    }
}

}  // namespace nm

#include "vmlab/qemu_process.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <system_error>

#include "core/base/error.hpp"
#include "core/base/unique_fd.hpp"
#include "core/base/wait_until.hpp"

namespace nm {

std::string nic_mac(size_t index) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "52:54:00:4e:4d:%02zx", index & 0xff);
    return buf;
}

std::vector<std::string> qemu_argv(const QemuSpec& spec) {
    std::vector<std::string> a = {
        spec.binary, "-accel", spec.kvm ? "kvm" : "tcg", "-m", std::to_string(spec.memory_mb), "-smp", std::to_string(spec.cpus), "-nodefaults",
        "-no-user-config", "-display", "none", "-no-reboot", "-kernel", spec.kernel, "-initrd", spec.initrd,
        // panic=-1 with -no-reboot: a guest that panics ends QEMU instead of hanging.
        "-append", "console=ttyS0 panic=-1 quiet", "-serial", "file:" + spec.console_log, "-virtfs",
        "local,path=" + spec.share_dir + ",mount_tag=nmshare,security_model=none,id=nmshare", "-pidfile", spec.pid_file, "-nic", "none"};
    const size_t hubs = spec.nics.size() / 2;
    for (size_t i = 0; i < spec.nics.size(); ++i) {
        const size_t hub = std::min(i / 2, hubs == 0 ? 0 : hubs - 1);
        char slot[16];
        std::snprintf(slot, sizeof slot, "0x%zx", 0x10 + i);
        a.insert(a.end(), {"-netdev", "hubport,id=nic" + std::to_string(i) + ",hubid=" + std::to_string(hub), "-device",
                           spec.nics[i].device + ",netdev=nic" + std::to_string(i) + ",mac=" + nic_mac(i) + ",addr=" + slot});
    }
    return a;
}

bool kvm_usable() {
    if (const char* accel = std::getenv("NICMATRIX_VM_ACCEL"); accel != nullptr && *accel != '\0') return std::string(accel) == "kvm";
    const int fd = ::open("/dev/kvm", O_RDWR | O_CLOEXEC);
    if (fd < 0) return false;
    ::close(fd);
    // A VM without nested virtualization may still have a /dev/kvm that opens, but a guest on it never runs:
    // KVM also needs the CPU's own virtualization (vmx or svm among the flags).
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line)) {
        if (line.rfind("flags", 0) != 0) continue;
        std::istringstream words(line);
        std::string w;
        while (words >> w) {
            if (w == "vmx" || w == "svm") return true;
        }
        return false;
    }
    return false;
}

std::string qemu_version(const std::string& binary) {
    const std::string command = "timeout 10 " + binary + " --version 2>&1";
    FILE* p = ::popen(command.c_str(), "r");
    if (p == nullptr) throw Error(ErrorKind::Failed, "run " + binary + " --version", std::error_code(errno, std::generic_category()));
    std::string text;
    std::array<char, 256> buf{};
    while (std::fgets(buf.data(), buf.size(), p) != nullptr) text += buf.data();
    const int status = ::pclose(p);
    std::smatch m;
    if (status != 0 || !std::regex_search(text, m, std::regex(R"(version ([0-9]+\.[0-9]+(\.[0-9]+)?))"))) {
        throw Error(ErrorKind::Failed, binary + " does not run (" + (text.empty() ? "no output" : text.substr(0, 200)) +
                                           "); the VM lab needs Debian's qemu-system-x86 (scripts/install-deps.sh vm)");
    }
    return m[1];
}

int start_qemu(const std::vector<std::string>& argv, const std::string& log_file, QemuLifetime lifetime) {
    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const auto& s : argv) args.push_back(const_cast<char*>(s.c_str()));
    args.push_back(nullptr);
    // The child writes its errno here when it cannot exec; the write end closes on exec. Until that read
    // ends, the child is still a copy of nicmatrix, whose /proc/PID/cmdline names no lab: a caller that
    // judged "is the lab's QEMU running" in that window took a booting lab for an ended one.
    int exec_pipe[2];
    if (::pipe2(exec_pipe, O_CLOEXEC) != 0) throw Error(ErrorKind::Failed, "start " + argv.front(), std::error_code(errno, std::generic_category()));
    UniqueFd exec_read(exec_pipe[0]);
    UniqueFd exec_write(exec_pipe[1]);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) throw Error(ErrorKind::Failed, "start " + argv.front(), std::error_code(errno, std::generic_category()));
    if (pid == 0) {
        // Only async-signal-safe calls from here to exec.
        const auto fail = [&](int err) {
            (void)!::write(exec_pipe[1], &err, sizeof err);
            ::_exit(127);
        };
        if (lifetime == QemuLifetime::Tied) {
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (::getppid() != parent) ::_exit(1);  // the parent died before the line above took effect
        } else {
            ::setsid();
        }
        sigset_t all;
        sigemptyset(&all);
        ::sigprocmask(SIG_SETMASK, &all, nullptr);  // nicmatrix blocks the stop signals in every thread
        ::signal(SIGPIPE, SIG_DFL);
        const int in = ::open("/dev/null", O_RDONLY);
        if (in < 0) fail(errno);
        const int out = ::open(log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
        if (out < 0) fail(errno);
        ::dup2(in, 0);
        ::dup2(out, 1);
        ::dup2(out, 2);
        ::execvp(args[0], args.data());
        fail(errno);
    }
    exec_write.reset();
    int child_errno = 0;
    ssize_t n;
    do {
        n = ::read(exec_read.get(), &child_errno, sizeof child_errno);
    } while (n < 0 && errno == EINTR);
    if (n == static_cast<ssize_t>(sizeof child_errno)) {
        int status = 0;
        ::waitpid(pid, &status, 0);
        throw Error(ErrorKind::Failed, "start " + argv.front() + " (log " + log_file + ")", std::error_code(child_errno, std::generic_category()));
    }
    return pid;
}

bool process_running(int pid) {
    if (pid <= 0) return false;
    int status = 0;
    // Our own child: reaped here once it has ended. Another's (a lab another nicmatrix started): ECHILD.
    if (::waitpid(pid, &status, WNOHANG) == pid) return false;
    if (::kill(pid, 0) != 0 && errno == ESRCH) return false;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return false;
    const auto close = line.rfind(')');
    return close == std::string::npos || close + 2 >= line.size() || line[close + 2] != 'Z';
}

void end_process(int pid, std::chrono::milliseconds grace) {
    if (!process_running(pid)) return;
    ::kill(pid, SIGTERM);
    try {
        wait_until([&] { return !process_running(pid); }, grace, "process " + std::to_string(pid) + " to end after SIGTERM");
        return;
    } catch (const Error&) {
        // Still there: SIGKILL below.
    }
    ::kill(pid, SIGKILL);
    wait_until([&] { return !process_running(pid); }, std::chrono::seconds(5), "process " + std::to_string(pid) + " to end after SIGKILL");
}

}  // namespace nm

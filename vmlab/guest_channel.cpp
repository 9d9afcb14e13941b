#include "vmlab/guest_channel.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <random>
#include <thread>

#include "core/base/atomic_file.hpp"
#include "core/base/error.hpp"

namespace nm {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// The guest polls its share every 0.1 s; the host polls as often (a command's files are on the host's disk).
constexpr auto kPoll = std::chrono::milliseconds(50);

std::string quoted(const std::string& s) {
    std::string q = "'";
    for (const char c : s) {
        if (c == '\'') q += "'\\''";
        else q += c;
    }
    return q + "'";
}

// A file another process appends to, read on from where the last read ended.
class Follower {
public:
    explicit Follower(fs::path path) : path_(std::move(path)) {}
    std::string more() {
        std::string chunk;
        const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) return chunk;
        char buf[65536];
        for (;;) {
            const ssize_t n = ::pread(fd, buf, sizeof buf, static_cast<off_t>(offset_));
            if (n <= 0) break;
            chunk.append(buf, static_cast<size_t>(n));
            offset_ += static_cast<size_t>(n);
        }
        ::close(fd);
        return chunk;
    }

private:
    fs::path path_;
    size_t offset_ = 0;
};

std::string new_id() {
    std::random_device rd;
    return std::to_string(::getpid()) + "-" + std::to_string(rd()) + std::to_string(rd() % 1000);
}

}  // namespace

std::string guest_script(const std::vector<std::string>& argv) {
    if (argv.empty()) throw usage_error("lab exec: no command given");
    std::string s = "set --";
    for (const auto& a : argv) s += " " + quoted(a);
    s += "\ncase \"$1\" in */*) ;; *) for d in /usr/sbin /usr/bin; do if [ -x \"$d/$1\" ]; then p=\"$d/$1\"; shift; set -- \"$p\" \"$@\"; break; fi; "
         "done ;; esac\n"
         "exec \"$@\"\n";
    return s;
}

GuestChannel::GuestChannel(fs::path share, std::function<bool()> alive) : share_(std::move(share)), alive_(std::move(alive)) {}

void GuestChannel::wait_ready(std::chrono::milliseconds timeout, std::stop_token stop) const {
    const auto deadline = Clock::now() + timeout;
    while (!fs::exists(share_ / "ready")) {
        if (stop.stop_requested()) throw Error(ErrorKind::Failed, "boot the guest: interrupted");
        if (!alive_()) throw Error(ErrorKind::Failed, "boot the guest: QEMU ended before the guest was ready");
        if (Clock::now() > deadline) {
            throw Error(ErrorKind::Failed, "boot the guest: not ready after " + std::to_string(timeout.count() / 1000) + " s");
        }
        std::this_thread::sleep_for(kPoll);
    }
}

GuestCommandResult GuestChannel::run(const std::vector<std::string>& argv, std::optional<std::chrono::milliseconds> timeout, std::stop_token stop,
                                     const OutputSink& on_out, const OutputSink& on_err, std::chrono::milliseconds grace) const {
    const std::string id = new_id();
    const fs::path dir = share_ / "run" / id;
    fs::create_directories(share_ / "cmd");
    // Written under another name and renamed: the guest never runs half a script.
    write_file_atomically((share_ / "cmd" / (id + ".sh")).string(), guest_script(argv), 0644);

    GuestCommandResult result;
    Follower out(dir / "out"), err(dir / "err");
    const auto pass = [&] {
        if (auto chunk = out.more(); !chunk.empty()) on_out ? on_out(chunk) : void(result.out += chunk);
        if (auto chunk = err.more(); !chunk.empty()) on_err ? on_err(chunk) : void(result.err += chunk);
    };
    const auto started = Clock::now();
    std::optional<Clock::time_point> stop_sent;
    const std::string what = "run `" + argv.front() + "` in the guest";
    for (;;) {
        pass();
        if (fs::exists(dir / "rc")) break;
        if (!alive_()) throw Error(ErrorKind::Failed, what + ": the guest ended (QEMU is gone)");
        const bool timed_out = timeout && Clock::now() - started > *timeout;
        if (!stop_sent && (stop.stop_requested() || timed_out)) {
            // The guest may not have taken the command yet: then it is withdrawn here, never run.
            std::error_code ec;
            if (fs::remove(share_ / "cmd" / (id + ".sh"), ec)) {
                result.exit_code = 143;
                result.stopped = true;
                return result;
            }
            std::ofstream(dir / "stop").put('\n');
            stop_sent = Clock::now();
            result.stopped = true;
        }
        if (stop_sent && Clock::now() - *stop_sent > grace) {
            throw Error(ErrorKind::Failed, what + ": still running " + std::to_string(grace.count() / 1000) + " s after SIGTERM");
        }
        std::this_thread::sleep_for(kPoll);
    }
    pass();
    std::string rc;
    std::ifstream(dir / "rc") >> rc;
    try {
        result.exit_code = std::stoi(rc);
    } catch (const std::exception&) {
        throw Error(ErrorKind::Failed, what + ": unreadable exit status \"" + rc + "\"");
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
    return result;
}

}  // namespace nm

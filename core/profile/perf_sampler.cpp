#include "core/profile/perf_sampler.hpp"

#include <linux/perf_event.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

#include "core/base/error.hpp"

namespace nm::profile {
namespace {

constexpr size_t kSampleBytes = 40;  // header 8 + ip 8 + pid/tid 8 + time 8 + cpu 8

int read_paranoid() {
    std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
    int v = 2;
    in >> v;
    return v;
}

std::string read_online_cpus() {
    std::ifstream in("/sys/devices/system/cpu/online");
    std::ostringstream s;
    s << in.rdbuf();
    return std::move(s).str();
}

}  // namespace

std::vector<uint32_t> parse_cpu_list(std::string_view text) {
    std::vector<uint32_t> out;
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find(',', pos);
        if (end == std::string_view::npos) end = text.size();
        const std::string_view item = text.substr(pos, end - pos);
        pos = end + 1;
        uint32_t a = 0, b = 0;
        const size_t dash = item.find('-');
        const std::string_view first = item.substr(0, dash);
        if (std::from_chars(first.data(), first.data() + first.size(), a).ec != std::errc()) continue;
        b = a;
        if (dash != std::string_view::npos) {
            const std::string_view second = item.substr(dash + 1);
            if (std::from_chars(second.data(), second.data() + second.size(), b).ec != std::errc() || b < a) continue;
        }
        for (uint32_t c = a; c <= b && c - a < 65536; ++c) out.push_back(c);
    }
    return out;
}

std::string perf_open_error(int err, int paranoid) {
    const std::string what = std::string("perf_event_open (cpu-clock on every CPU): ") + std::strerror(err);
    switch (err) {
        case EACCES:
        case EPERM:
            return "profile: " + what + ": sampling every CPU needs CAP_PERFMON (or root) or kernel.perf_event_paranoid <= 0; it is " +
                   std::to_string(paranoid) + ": run as root, or `sysctl -w kernel.perf_event_paranoid=0`";
        case ENOSYS: return "profile: " + what + ": this kernel was built without perf events (CONFIG_PERF_EVENTS)";
        case ENOENT:
        case ENODEV:
        case EOPNOTSUPP: return "profile: " + what + ": this kernel has no software cpu-clock event (PERF_COUNT_SW_CPU_CLOCK)";
        default: return "profile: " + what;
    }
}

size_t ring_pages_for(uint32_t hz, double seconds) {
    const double bytes = static_cast<double>(hz) * kSampleBytes * seconds;
    size_t pages = 8;
    while (pages < 1024 && static_cast<double>(pages) * 4096 < bytes) pages *= 2;
    return pages;
}

PerfSampler::PerfSampler(uint32_t hz) : hz_(hz) {
    const std::vector<uint32_t> online = parse_cpu_list(read_online_cpus());
    if (online.empty()) throw Error(ErrorKind::Failed, "profile: no online CPU in /sys/devices/system/cpu/online");
    const long page = ::sysconf(_SC_PAGESIZE);
    // Room for 3 s of samples: the reader is woken at a quarter full and drains every 50 ms besides, so
    // only a reader kept off every CPU for seconds would lose any.
    const size_t pages = ring_pages_for(hz, 3.0);
    const size_t data_bytes = pages * static_cast<size_t>(page);
    for (uint32_t cpu : online) {
        perf_event_attr attr{};
        attr.size = sizeof attr;
        attr.type = PERF_TYPE_SOFTWARE;
        attr.config = PERF_COUNT_SW_CPU_CLOCK;
        attr.sample_period = 1'000'000'000ULL / std::max<uint32_t>(1, hz);
        attr.sample_type = kSampleType;
        attr.disabled = 1;
        attr.mmap = 1;  // executable mappings, to name user addresses of new processes
        attr.comm = 1;
        attr.comm_exec = 1;
        attr.task = 1;  // fork and exit
        attr.sample_id_all = 1;
        attr.use_clockid = 1;
        attr.clockid = CLOCK_MONOTONIC;  // the engine's window is on steady_clock, which is CLOCK_MONOTONIC
        attr.watermark = 1;
        attr.wakeup_watermark = static_cast<uint32_t>(data_bytes / 4);
        const long fd = ::syscall(SYS_perf_event_open, &attr, -1, static_cast<int>(cpu), -1, PERF_FLAG_FD_CLOEXEC);
        if (fd < 0) {
            const int err = errno;
            // A CPU that went offline since the list was read is not an error.
            if (err == ENODEV && cpu != online.back()) continue;
            throw usage_error(perf_open_error(err, read_paranoid()));
        }
        Ring r;
        r.fd = UniqueFd(static_cast<int>(fd));
        r.length = data_bytes + static_cast<size_t>(page);
        r.base = ::mmap(nullptr, r.length, PROT_READ | PROT_WRITE, MAP_SHARED, r.fd.get(), 0);
        if (r.base == MAP_FAILED) {
            const int err = errno;
            r.base = nullptr;
            throw usage_error("profile: map the sample ring of CPU " + std::to_string(cpu) + " (" + std::to_string(r.length / 1024) +
                              " KiB): " + std::strerror(err) + (err == EPERM ? "; raise kernel.perf_event_mlock_kb or run as root" : ""));
        }
        rings_.push_back(std::move(r));
        cpus_.push_back(cpu);
    }
    if (rings_.empty()) throw usage_error(perf_open_error(ENODEV, read_paranoid()));
}

PerfSampler::~PerfSampler() {
    for (auto& r : rings_) ::ioctl(r.fd.get(), PERF_EVENT_IOC_DISABLE, 0);
    if (reader_.joinable()) {
        reader_.request_stop();
        reader_.join();
    }
}

PerfSampler::Ring::~Ring() {
    if (base != nullptr) ::munmap(base, length);
}

void PerfSampler::drain_all(RecordBatch& into) {
    for (auto& r : rings_) {
        auto* meta = static_cast<perf_event_mmap_page*>(r.base);
        const uint64_t offset = meta->data_offset != 0 ? meta->data_offset : static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
        const uint64_t size = meta->data_size != 0 ? meta->data_size : r.length - offset;
        // data_head is written by the kernel: read it with acquire, publish data_tail with release, so the
        // kernel never overwrites a record before it is copied out (perf_event_open(2), "mmap layout").
        const uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
        const uint64_t tail = meta->data_tail;
        if (head == tail) continue;
        const std::span<const std::byte> data(static_cast<const std::byte*>(r.base) + offset, size);
        const uint64_t done = drain_ring(data, tail, head, into);
        __atomic_store_n(&meta->data_tail, done, __ATOMIC_RELEASE);
    }
}

void PerfSampler::enable() {
    if (enabled_) return;
    enabled_ = true;
    reader_ = std::jthread([this](std::stop_token stop) {
        std::vector<pollfd> fds;
        for (const auto& r : rings_) fds.push_back({r.fd.get(), POLLIN, 0});
        while (!stop.stop_requested()) {
            ::poll(fds.data(), fds.size(), 50);
            drain_all(batch_);
        }
    });
    for (auto& r : rings_) ::ioctl(r.fd.get(), PERF_EVENT_IOC_ENABLE, 0);
}

void PerfSampler::disable() {
    if (!enabled_) return;
    enabled_ = false;
    for (auto& r : rings_) ::ioctl(r.fd.get(), PERF_EVENT_IOC_DISABLE, 0);
    reader_.request_stop();
    reader_.join();
    drain_all(batch_);
}

RecordBatch PerfSampler::take() { return std::exchange(batch_, RecordBatch{}); }

}  // namespace nm::profile

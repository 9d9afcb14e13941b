#include "core/workers/worker.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>

namespace nm {

void run_worker(WorkerFn fn, WorkerJob& job) noexcept {
    // A worker's exception must not leave its thread (std::terminate) and must not pass silently: it
    // becomes the worker's error, which makes the end's report failed.
    try {
        fn(job);
    } catch (const std::exception& e) {
        if (job.out.error.empty()) job.out.error = e.what();
    } catch (...) {
        if (job.out.error.empty()) job.out.error = "worker failed: unknown exception";
    }
    job.progress.done.store(true);
}

Timeline until_peer_done(Timeline timeline) {
    timeline.window_end = TimePoint::max();
    return timeline;
}

std::vector<StreamResult> stream_results(const std::vector<DataStream>& streams, Direction direction) {
    std::vector<StreamResult> v(streams.size());
    for (size_t i = 0; i < streams.size(); ++i) {
        v[i].id = streams[i].id;
        v[i].direction = direction;
    }
    return v;
}

std::string stream_error(uint32_t id, const char* what, int err) { return "stream " + std::to_string(id) + ": " + what + ": " + std::strerror(err); }

bool would_block(int err) { return err == EAGAIN || err == EWOULDBLOCK || err == EINTR; }

void run_receive_loop(WorkerJob& job, WindowMeter& meter, OnStop on_stop, std::function<bool(StreamSet&, TimePoint)> on_turn,
                      std::function<Step(Stream&, TimePoint)> on_ready, const std::function<void(StreamSet&)>& after) {
    StreamSet set(std::move(job.streams), {.events = EPOLLIN,
                                           .on_stop = on_stop,
                                           .on_turn = std::move(on_turn),
                                           .on_ready = std::move(on_ready),
                                           .spin = std::chrono::microseconds(job.plan.socket.rx_spin_us)});
    set.run(job.stop);
    job.out.rx_spin = set.spin_stats();
    meter.close();
    if (after) after(set);
}

std::vector<char> rr_payload(size_t size) {
    std::vector<char> buf(std::max<size_t>(size, 1));
    for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<char>('A' + i % 26);
    return buf;
}

}  // namespace nm

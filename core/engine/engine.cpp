#include "core/engine/engine.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

#include "core/base/error.hpp"
#include "core/engine/worker_kinds.hpp"
#include "core/engine/worker_merge.hpp"
#include "core/host/cpu_affinity.hpp"
#include "core/workers/worker.hpp"

namespace nm {

void napi_rates(NapiStats& napi, double duration_s) {
    const auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
    napi.interrupts_per_s = ratio(static_cast<double>(napi.interrupts), duration_s);
    napi.interrupts_per_packet = ratio(static_cast<double>(napi.interrupts), static_cast<double>(napi.packets));
    napi.processed_per_s = ratio(static_cast<double>(napi.processed), duration_s);
    napi.processed_per_interrupt = ratio(static_cast<double>(napi.processed), static_cast<double>(napi.interrupts));
}

uint64_t worker_memory_bytes(const EnginePlan& plan, bool sender, size_t streams) { return worker_kind(plan).memory(plan, sender, streams); }

EndEngine::EndEngine(EnginePlan plan, WindowObserver* observer) : plan_(std::move(plan)), observer_(observer) {}

EndEngine::~EndEngine() {
    send_stop_.request_stop();
    recv_stop_.request_stop();
}

void EndEngine::start(const Timeline& timeline) {
    timeline_ = timeline;
    // A second handle on every data socket: finish() can shut one down while its worker still holds it.
    for (const auto* groups : {&plan_.send_groups, &plan_.recv_groups}) {
        for (const auto& g : *groups) {
            for (const auto& st : g) sockets_.emplace_back(::fcntl(st.fd.get(), F_DUPFD_CLOEXEC, 0));
        }
    }
    const WorkerKind& kind = worker_kind(plan_);
    const auto launch = [&](std::vector<std::vector<DataStream>>& groups, WorkerFn fn, std::stop_source& stop,
                            std::vector<std::unique_ptr<WorkerProgress>>& progress, std::vector<std::unique_ptr<WorkerOutput>>& outs,
                            const char* role) {
        for (auto& g : groups) {
            progress.push_back(std::make_unique<WorkerProgress>());
            outs.push_back(std::make_unique<WorkerOutput>());
            const std::string name = std::string("nm-") + role + "-" + std::to_string(outs.size() - 1);
            try {
                threads_.emplace_back(
                    [fn, name, streams = std::move(g), this, p = progress.back().get(), o = outs.back().get(), token = stop.get_token()]() mutable {
                        p->tid.store(static_cast<int32_t>(::gettid()));
                        ::pthread_setname_np(::pthread_self(), name.c_str());
                        WorkerJob job{std::move(streams), plan_, timeline_, *p, token, *o};
                        // Pinned before the first byte moves, so the window sees only the asked CPUs; a pin the
                        // kernel refuses fails this worker, and so the end, with the reason.
                        try {
                            pin_current_thread(plan_.cpus);
                        } catch (const Error& e) {
                            o->error = e.what();
                            p->done.store(true);
                            return;
                        }
                        run_worker(fn, job);
                    });
            } catch (const std::system_error& e) {
                // Threads already started are stopped and joined by the destructor.
                throw system_error("start a worker thread", e.code().value());
            }
        }
    };
    launch(plan_.send_groups, kind.send, send_stop_, send_progress_, send_out_, "send");
    launch(plan_.recv_groups, kind.receive, recv_stop_, recv_progress_, recv_out_, "recv");
    last_progress_at_ = timeline.start;
    started_ = true;
}

bool EndEngine::senders_done() const {
    return std::all_of(send_progress_.begin(), send_progress_.end(), [](const auto& p) { return p->done.load(); });
}

bool EndEngine::receivers_done() const {
    return std::all_of(recv_progress_.begin(), recv_progress_.end(), [](const auto& p) { return p->done.load(); });
}

namespace {

// SO_INCOMING_CPU and SO_INCOMING_NAPI_ID of every data socket: where the last packet each received was
// processed. A socket that received nothing reads -1 (CPU) or 0 (NAPI), a kernel without busy polling
// refuses the NAPI id: both are left out.
ReceivePath read_incoming(const std::vector<UniqueFd>& sockets, ReceivePath path) {
    for (const auto& s : sockets) {
        int value = -1;
        socklen_t len = sizeof value;
        if (::getsockopt(s.get(), SOL_SOCKET, SO_INCOMING_CPU, &value, &len) == 0 && value >= 0) {
            path.incoming_cpus.push_back(static_cast<uint32_t>(value));
        }
        unsigned napi = 0;
        len = sizeof napi;
        if (::getsockopt(s.get(), SOL_SOCKET, SO_INCOMING_NAPI_ID, &napi, &len) == 0 && napi != 0) path.incoming_napi_ids.push_back(napi);
    }
    for (auto* v : {&path.incoming_cpus, &path.incoming_napi_ids}) {
        std::sort(v->begin(), v->end());
        v->erase(std::unique(v->begin(), v->end()), v->end());
    }
    return path;
}

uint64_t progress_total(const std::vector<std::unique_ptr<WorkerProgress>>& progress) {
    uint64_t total = 0;
    for (const auto& p : progress) total += p->bytes.load(std::memory_order_relaxed);
    return total;
}

}  // namespace

void EndEngine::take_start_snapshot(TimePoint now) {
    snap_start_ = take_proc_snapshot(plan_.iface);
    t_start_ = timeline_.window_start;  // the workers count from there, whenever this poll came
    live_from_ = now;
    live_sent_ = progress_total(send_progress_);
    live_received_ = progress_total(recv_progress_);
    if (observer_ != nullptr) observer_->window_started(now);
}

void EndEngine::tell_live(TimePoint now) {
    const uint64_t sent = progress_total(send_progress_), received = progress_total(recv_progress_);
    LiveInterval i;
    i.index = live_index_++;
    i.start_s = std::chrono::duration<double>(live_from_ - t_start_).count();
    i.end_s = std::chrono::duration<double>(now - t_start_).count();
    i.sent_bytes = sent - live_sent_;
    i.received_bytes = received - live_received_;
    live_from_ = now;
    live_sent_ = sent;
    live_received_ = received;
    live_sink_(i);
}

void EndEngine::take_end_snapshot(TimePoint now) {
    // The part-interval the window ends in (none when it ends on an interval's edge, to the poll).
    if (live_sink_ && timeline_.interval.count() > 0 && now - live_from_ > std::chrono::milliseconds(1)) tell_live(now);
    if (observer_ != nullptr) observer_->window_ended(now);
    snap_end_ = take_proc_snapshot(plan_.iface);
    t_end_ = now;
}

void EndEngine::poll(TimePoint now) {
    if (!snap_start_ && now >= timeline_.window_start) take_start_snapshot(now);
    if (snap_start_ && !snap_end_ && now >= next_live_edge()) tell_live(now);
    // An end that only receives measures until its receivers are done (the peer's data has ended); an end
    // that sends measures its own window.
    const bool window_over = has_senders() && now >= timeline_.window_end;
    if (snap_start_ && !snap_end_ && (window_over || all_done())) {
        ended_by_ = window_over ? WindowEnd::Clock : WindowEnd::Workers;
        take_end_snapshot(now);
    }
}

TimePoint EndEngine::next_due() const {
    if (!snap_start_) return timeline_.window_start;
    if (snap_end_) return TimePoint::max();
    TimePoint due = has_senders() ? timeline_.window_end : TimePoint::max();
    return std::min(due, next_live_edge());
}

TimePoint EndEngine::next_live_edge() const {
    if (!live_sink_ || timeline_.interval.count() <= 0) return TimePoint::max();
    return t_start_ + timeline_.interval * static_cast<int64_t>(live_index_ + 1);
}

bool EndEngine::stalled(TimePoint now) {
    const uint64_t total = progress_total(send_progress_) + progress_total(recv_progress_);
    if (total != last_progress_) {
        last_progress_ = total;
        last_progress_at_ = now;
        return false;
    }
    if (now >= timeline_.window_end || all_done()) return false;
    return now - last_progress_at_ > plan_.stall_timeout;
}

EndReport EndEngine::finish(RunStatus status, const std::string& error) {
    send_stop_.request_stop();
    recv_stop_.request_stop();
    // Every worker looks at its stop token at least every poll (a UDP receiver drains for at most
    // StreamSet::kDrainTime); one that has not ended in time is stuck in a socket, and shutting its
    // sockets down gets it out.
    const auto limit = std::chrono::steady_clock::now() + kFinishTime;
    while (!all_done() && std::chrono::steady_clock::now() < limit) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (!all_done()) {
        for (const auto& s : sockets_) ::shutdown(s.get(), SHUT_RDWR);
    }
    for (auto& t : threads_) {
        if (t.joinable()) t.join();
    }
    if (snap_start_ && !snap_end_) take_end_snapshot(std::chrono::steady_clock::now());
    EndReport r;
    r.status = status;
    r.error = error;
    auto& m = r.measurement;
    m.iface = plan_.iface;
    // The window's end: exactly window_end when the clock ended it; when the workers did, the last time one
    // of them counted data (a receiver's last byte before the peer's end of data, not the poll that saw it
    // done); when finish() did, the time it stopped.
    if (ended_by_ == WindowEnd::Clock) t_end_ = timeline_.window_end;
    if (ended_by_ == WindowEnd::Workers) {
        TimePoint last{};
        for (const auto* outs : {&send_out_, &recv_out_}) {
            for (const auto& o : *outs) last = std::max(last, o->window.last_count);
        }
        if (last > t_start_) t_end_ = std::min(t_end_, last);
    }
    const double duration = snap_start_ ? std::chrono::duration<double>(t_end_ - t_start_).count() : 0.0;
    m.duration_s = duration;
    if (snap_start_ && snap_end_) {
        const auto& a = *snap_start_;
        const auto& b = *snap_end_;
        m.system = system_cpu_between(a.cpu, b.cpu, static_cast<double>(::sysconf(_SC_CLK_TCK)));
        m.napi.processed = counter_delta(a.softnet.processed, b.softnet.processed);
        m.napi.dropped = counter_delta(a.softnet.dropped, b.softnet.dropped);
        m.napi.time_squeeze = counter_delta(a.softnet.time_squeeze, b.softnet.time_squeeze);
        m.napi.interrupts = counter_delta(a.softnet.interrupts, b.softnet.interrupts);
        m.counters_before = a.counters;
        m.counters_after = b.counters;
        m.napi.packets = counter_delta(a.counters.rx_packets, b.counters.rx_packets) + counter_delta(a.counters.tx_packets, b.counters.tx_packets);
        napi_rates(m.napi, duration);
        auto& rx = m.receive_path.net_rx_per_cpu;
        rx.assign(std::min(a.net_rx.size(), b.net_rx.size()), 0);
        for (size_t cpu = 0; cpu < rx.size(); ++cpu) rx[cpu] = counter_delta(a.net_rx[cpu], b.net_rx[cpu]);
    }
    m.receive_path = read_incoming(sockets_, std::move(m.receive_path));
    for (const auto* outs : {&send_out_, &recv_out_}) {
        for (const auto& o : *outs) {
            m.cpu.user_s += o->window.cpu.user_s;
            m.cpu.sys_s += o->window.cpu.sys_s;
            m.placement.insert(m.placement.end(), o->window.cpus.begin(), o->window.cpus.end());
            if (o->error.empty()) continue;
            // A worker that failed fails the end: its figures are partial or none (`-u -l 65507 --gso` has
            // every send refused by the kernel and moves nothing).
            if (r.status == RunStatus::Ok) r.status = RunStatus::Failed;
            if (r.error.empty()) r.error = o->error;
        }
    }
    std::sort(m.placement.begin(), m.placement.end());
    m.placement.erase(std::unique(m.placement.begin(), m.placement.end()), m.placement.end());
    m.cpu.util_pct = duration > 0 ? 100.0 * (m.cpu.user_s + m.cpu.sys_s) / duration : 0;
    const double interval_s = std::chrono::duration<double>(timeline_.interval).count();
    r.sent = merge_streams(send_out_, duration);
    r.received = merge_streams(recv_out_, duration);
    for (const auto& s : r.sent) {
        r.sent_bytes += s.bytes;
        r.sent_packets += s.packets;
    }
    for (const auto& s : r.received) {
        r.received_bytes += s.bytes;
        r.received_packets += s.packets;
    }
    for (const auto& p : send_progress_) r.send_tids.push_back(p->tid.load());
    for (const auto& p : recv_progress_) r.recv_tids.push_back(p->tid.load());
    for (const auto& o : send_out_) r.send_calls += o->calls;
    for (const auto& o : recv_out_) r.recv_calls += o->calls;
    m.io_calls = r.send_calls + r.recv_calls;
    r.sent_intervals = merge_intervals(send_out_, interval_s, duration);
    r.received_intervals = merge_intervals(recv_out_, interval_s, duration);
    if (plan_.pattern != TrafficPattern::Stream) {
        // The initiator's intervals are transactions (window.interval_packets); the responder keeps none.
        r.rr = merge_rr(has_senders() ? send_out_ : recv_out_, has_senders() ? interval_s : 0, duration);
        r.sent_intervals.clear();
    }
    m.socket = merge_knobs({&send_out_, &recv_out_}, plan_.socket.skip_rx_copy && (has_receivers() || plan_.pattern != TrafficPattern::Stream));
    return r;
}

}  // namespace nm

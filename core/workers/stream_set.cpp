#include "core/workers/stream_set.hpp"

#include <fcntl.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <ctime>

#include "core/base/error.hpp"

namespace nm {

StreamSet::StreamSet(std::vector<DataStream> streams, StreamSetArgs args) : epoll_(::epoll_create1(EPOLL_CLOEXEC)), args_(std::move(args)) {
    if (!epoll_) throw system_error("epoll_create1", errno);
    spin_.us = static_cast<uint32_t>(args_.spin.count());
    for (size_t i = 0; i < streams.size(); ++i) streams_.push_back(Stream(std::move(streams[i]), i, args_.events));
    for (Stream& s : streams_) add(s);
    open_ = streams_.size();
    events_.resize(std::clamp<size_t>(streams_.size(), 1, kMaxEventsPerWait));
}

Stream& StreamSet::add(DataStream stream, uint32_t events) {
    Stream* s = nullptr;
    if (!free_.empty()) {
        s = &streams_[free_.back()];
        free_.pop_back();
        s->fd_ = std::move(stream.fd);
        s->id_ = stream.id;
        s->events_ = events;
        s->finished_ = false;
        s->due_ = TimePoint::max();
    } else {
        streams_.push_back(Stream(std::move(stream), streams_.size(), events));
        s = &streams_.back();
        // Indexing events_ (not iterating it) in run() keeps a resize here harmless mid-batch.
        if (events_.size() < kMaxEventsPerWait && events_.size() < streams_.size()) events_.resize(streams_.size());
    }
    ++open_;
    try {
        add(*s);
    } catch (...) {
        release(*s);
        throw;
    }
    return *s;
}

void StreamSet::release(Stream& s) {
    finish(s);
    if (!s.fd_) return;
    s.fd_ = UniqueFd();
    free_.push_back(s.index_);
}

void StreamSet::run(std::stop_token stop) {
    bool draining = false;
    TimePoint drain_end = TimePoint::max();
    while (open_ > 0) {
        const auto now = std::chrono::steady_clock::now();
        if (stop.stop_requested()) {
            if (args_.on_stop == OnStop::End) return;
            if (!draining) drain_end = now + kDrainTime;
            draining = true;
        }
        if (now >= drain_end) return;
        if (args_.on_turn && !args_.on_turn(*this, now)) return;
        if (postponed_ > 0) serve_due(now);
        const int n = wait(now, draining);
        if (n < 0) continue;             // EINTR: look at the clock and the stop token again
        if (n == 0 && draining) return;  // everything that was queued has been taken
        // The wait may have lasted up to kPollTime: what became ready is stamped with when it woke.
        const TimePoint woke = n > 0 ? std::chrono::steady_clock::now() : now;
        for (int e = 0; e < n; ++e) {
            Stream& s = streams_[events_[static_cast<size_t>(e)].data.u64];
            // An earlier stream's callback in this batch may have finished this one (StreamSet::finish).
            if (s.in_epoll_) serve(s, woke);
        }
    }
}

// Calls the stream's callback until it would block, is paced, finishes, or has had its share of this
// wake-up. Only a stream that waits for readiness is (re)registered with epoll, so a paced stream costs
// no epoll_ctl while it keeps finding tokens, and a postponed socket that stays writable does not wake the
// loop in a busy circle.
void StreamSet::serve(Stream& s, TimePoint now) {
    for (int k = 0; k < kCallsPerWake; ++k) {
        const Step step = args_.on_ready(s, now);
        switch (step.kind()) {
            case Step::Kind::Again: continue;
            case Step::Kind::Wait: add(s); return;
            case Step::Kind::Later: postpone(s, step.at()); return;
            case Step::Kind::Done: finish(s); return;
        }
    }
    add(s);  // still ready: level-triggered epoll reports it again on the next turn
}

// Serves the postponed streams whose time has come, and finds when the next one is due (the loop's wait
// must not sleep past it).
void StreamSet::serve_due(TimePoint now) {
    next_due_ = TimePoint::max();
    for (Stream& s : streams_) {
        if (s.due_ == TimePoint::max()) continue;
        if (s.due_ <= now) {
            s.due_ = TimePoint::max();
            --postponed_;
            serve(s, now);
        }
        next_due_ = std::min(next_due_, s.due_);  // serve() may have postponed it again
    }
}

// Waits for readiness: not at all while draining, at most kPollTime otherwise, and no later than the next
// postponed stream's due time. epoll_wait counts in milliseconds, too coarse for pacing, so a wait for a
// due time uses epoll_pwait2 (Linux 5.11) and its nanoseconds. A receiver with a spin polls first. -1 on
// EINTR.
int StreamSet::wait(TimePoint now, bool draining) {
    const int max = static_cast<int>(events_.size());
    int n = 0;
    if (draining) {
        n = ::epoll_wait(epoll_.get(), events_.data(), max, 0);
    } else if (postponed_ == 0) {
        if (args_.spin.count() > 0) n = spin(max);
        if (n == 0) n = ::epoll_wait(epoll_.get(), events_.data(), max, static_cast<int>(kPollTime.count()));
    } else {
        const auto t = std::chrono::steady_clock::now();
        const auto until = std::min(next_due_, now + kPollTime);
        const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::max(until - t, TimePoint::duration::zero()));
        const timespec ts{static_cast<time_t>(ns.count() / 1'000'000'000), static_cast<long>(ns.count() % 1'000'000'000)};
        n = ::epoll_pwait2(epoll_.get(), events_.data(), max, &ts, nullptr);
    }
    if (n < 0) {
        if (errno == EINTR) return -1;
        throw system_error("epoll_wait", errno);
    }
    return n;
}

// Polls for up to args_.spin when nothing is ready: what epoll_wait gave (0 when the spin ran out, -1 on an
// error, errno set). A poll that finds something at once is no spin (the set was still busy).
int StreamSet::spin(int max) {
    int n = ::epoll_wait(epoll_.get(), events_.data(), max, 0);
    if (n != 0) return n;
    ++spin_.spins;
    const auto end = std::chrono::steady_clock::now() + args_.spin;
    do {
        n = ::epoll_wait(epoll_.get(), events_.data(), max, 0);
    } while (n == 0 && std::chrono::steady_clock::now() < end);
    if (n > 0) ++spin_.caught;
    return n;
}

void StreamSet::watch(Stream& s, uint32_t events) {
    if (s.events_ == events) return;
    s.events_ = events;
    if (!s.in_epoll_) return;  // takes effect when it is registered again
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = s.index_;
    if (::epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, s.fd(), &ev) != 0) throw system_error("epoll_ctl MOD", errno);
}

void StreamSet::reconnect(Stream& s, UniqueFd fd, uint32_t events) {
    const bool was_in = s.in_epoll_;
    remove(s);
    s.fd_ = std::move(fd);
    s.events_ = events;
    if (was_in) add(s);  // a postponed stream is registered when it is due, as before
}

void StreamSet::finish(Stream& s) {
    if (s.finished_) return;
    remove(s);
    if (s.due_ != TimePoint::max()) {
        s.due_ = TimePoint::max();
        --postponed_;
    }
    s.finished_ = true;
    --open_;
}

// Removed from epoll, not just ignored: epoll reports EPOLLERR and EPOLLHUP whatever the event mask, so a
// postponed socket with a pending error would wake the loop on every turn until it is due.
void StreamSet::postpone(Stream& s, TimePoint at) {
    remove(s);
    if (s.due_ == TimePoint::max()) ++postponed_;
    s.due_ = at;
    next_due_ = std::min(next_due_, at);
}

void StreamSet::add(Stream& s) {
    if (s.in_epoll_ || s.finished_) return;
    epoll_event ev{};
    ev.events = s.events_;
    ev.data.u64 = s.index_;
    if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, s.fd(), &ev) != 0) throw system_error("epoll_ctl ADD", errno);
    s.in_epoll_ = true;
}

void StreamSet::remove(Stream& s) {
    if (!s.in_epoll_) return;
    ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, s.fd(), nullptr);
    s.in_epoll_ = false;
}

bool block_with_poll_time(int fd) {
    const int flags = ::fcntl(fd, F_GETFL);
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(StreamSet::kPollTime).count();
    const timeval tv{static_cast<time_t>(us / 1'000'000), static_cast<suseconds_t>(us % 1'000'000)};
    if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0 || ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0 ||
        ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) != 0) {
        ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
        return false;
    }
    return true;
}

}  // namespace nm

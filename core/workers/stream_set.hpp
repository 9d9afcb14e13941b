#pragma once
// The skeleton every worker runs: one thread's set of non-blocking sockets on one level-triggered epoll
// loop. The set owns the bookkeeping every worker needs the same way (which streams are still open, epoll
// interest, postponed streams, how often a busy stream is served, when to stop); a worker supplies two
// callbacks: what to do when a stream is ready, and what to look at once per loop turn (its window meter,
// its clock). Modelled on neper's flow.h: the stream is reached only through accessors, the caller's own
// per-stream state lives in the caller, indexed by Stream::index().
//
//   StreamSet set(std::move(streams), {.events = EPOLLOUT, .on_turn = ..., .on_ready = ...});
//   set.run(stop);           // returns when every stream is done, on_turn says so, or stop is requested
//   for (Stream& s : set) ...   // sockets stay open until the set is destroyed (TCP_INFO, shutdown)
#include <sys/epoll.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <stop_token>
#include <vector>

#include "core/base/unique_fd.hpp"
#include "core/traffic/socket_types.hpp"
#include "core/workers/engine_plan.hpp"

namespace nm {

/// What a stream's on_ready callback asks for next.
class Step {
public:
    /// It did I/O and the socket may take more now: call again (at most kCallsPerWake times per wake-up).
    static Step again() { return Step(Kind::Again); }
    /// The socket would block: wait for its next readiness event.
    static Step wait() { return Step(Kind::Wait); }
    /// Nothing to do before `at` (pacing): stop watching the socket and call again at `at`.
    static Step later(TimePoint at) { return Step(Kind::Later, at); }
    /// The stream is finished (EOF, its bytes are out, an error): never call again.
    static Step done() { return Step(Kind::Done); }

    enum class Kind { Again, Wait, Later, Done };
    Kind kind() const { return kind_; }
    TimePoint at() const { return at_; }

private:
    explicit Step(Kind k, TimePoint at = {}) : kind_(k), at_(at) {}
    Kind kind_;
    TimePoint at_;
};

/// One stream of a set. Workers read it through the accessors; only the set changes its state.
class Stream {
public:
    int fd() const { return fd_.get(); }
    uint32_t id() const { return id_; }
    /// 0..size()-1 in the order the streams were given: the index of the caller's per-stream state.
    size_t index() const { return index_; }
    /// True once the stream has finished (on_ready returned done(), or StreamSet::finish).
    bool finished() const { return finished_; }

private:
    friend class StreamSet;
    Stream(DataStream s, size_t index, uint32_t events) : fd_(std::move(s.fd)), id_(s.id), index_(index), events_(events) {}

    UniqueFd fd_;
    uint32_t id_ = 0;
    size_t index_ = 0;
    uint32_t events_ = 0;    ///< the readiness the stream waits for (EPOLLIN, EPOLLOUT)
    bool in_epoll_ = false;  ///< registered with the set's epoll (not when postponed or finished)
    bool finished_ = false;
    TimePoint due_ = TimePoint::max();  ///< postponed until then; max() = not postponed
};

/// What the set does when the stop token fires.
enum class OnStop {
    End,    ///< leave the loop at once (senders, TCP receivers: TCP has its own end of stream)
    Drain,  ///< serve what is ready right now, then leave (UDP receivers: the datagrams already queued count),
            ///< for at most StreamSet::kDrainTime
};

class StreamSet;

/// The creation arguments: the events every stream starts waiting for, and the callbacks.
struct StreamSetArgs {
    uint32_t events = EPOLLIN;
    OnStop on_stop = OnStop::End;
    /// Once per loop turn, before the set waits, with the turn's time: tick the window meter, run probes.
    /// Returning false ends the loop (a timed sender past its window). Optional.
    std::function<bool(StreamSet&, TimePoint)> on_turn;
    /// A stream is ready (or its postponement is over). `now` is when the set's wait for it ended (the
    /// turn's time for a postponed stream whose time has come), so data counted with it falls into the
    /// interval it arrived in even after a long wait. Required.
    std::function<Step(Stream&, TimePoint)> on_ready;
    /// A receiver's --rx-spin: when nothing is ready, poll (epoll_wait with no timeout) for this long
    /// before sleeping, so that data arriving within it finds the receiver awake and the sending side's
    /// kernel has no sleeper to wake (on veth that wake-up is an IPI paid on the sending CPU). Zero: sleep
    /// at once. The spin is the receiver's CPU time, counted in its CPU figures.
    std::chrono::microseconds spin{0};
};

/// A worker's streams on one epoll loop. Not copyable or movable (epoll refers to streams by index).
/// References to streams stay valid while the set lives (add() never moves a stream).
class StreamSet {
public:
    /// A stream that stays ready is served at most this many times per wake-up, so that one busy socket
    /// cannot starve the others in the set, nor keep the loop from its clock and its stop token (for TCP,
    /// 8 writes of 128 KiB: 1 MiB per stream per turn).
    static constexpr int kCallsPerWake = 8;
    /// How long the loop waits with nothing ready before it looks at the clock and the stop token again:
    /// the longest a worker takes to notice the end of its window or a stop while no data moves.
    static constexpr std::chrono::milliseconds kPollTime{10};
    /// OnStop::Drain takes what is ready for at most this long: a flood that keeps the socket ready must
    /// not keep the worker (and the test, and the server) from ending.
    static constexpr std::chrono::milliseconds kDrainTime{200};

    /// Registers every stream with `args.events`. Throws nm::Error when epoll cannot be set up.
    StreamSet(std::vector<DataStream> streams, StreamSetArgs args);
    StreamSet(const StreamSet&) = delete;
    StreamSet& operator=(const StreamSet&) = delete;

    /// Runs the loop until every stream has finished, on_turn returns false, or `stop` is requested (see
    /// OnStop). Throws nm::Error if epoll fails.
    void run(std::stop_token stop);

    /// Changes the readiness `s` waits for (a request/response flow alternates EPOLLOUT and EPOLLIN).
    void watch(Stream& s, uint32_t events);

    /// Gives `s` a new socket in place of its old one, which is closed (a connection per transaction, as
    /// neper's flow_reconnect): same id and index, waiting for `events`. Throws nm::Error if epoll refuses it.
    void reconnect(Stream& s, UniqueFd fd, uint32_t events);

    /// Finishes `s` from outside its callback (on_ready returning done() does the same): it is not
    /// served again, and the loop ends when no stream is left.
    void finish(Stream& s);

    /// Adds a stream while the set runs (a connection a listener accepted), waiting for `events`. It
    /// takes the slot of a released stream when there is one (same index), else a new one at size():
    /// per-stream state indexed by Stream::index() must grow with size(). Throws nm::Error if epoll
    /// refuses it.
    Stream& add(DataStream stream, uint32_t events);

    /// Finishes `s` and closes its socket now, so its slot can be reused by add() (a connection of a
    /// connection-per-transaction test that is over; finish() keeps the socket until the set is destroyed).
    void release(Stream& s);

    size_t size() const { return streams_.size(); }
    size_t open() const { return open_; }
    /// What the spin did so far (StreamSetArgs::spin): how often it ran and how often data ended it.
    RxSpinStats spin_stats() const { return spin_; }
    Stream& operator[](size_t i) { return streams_[i]; }
    std::deque<Stream>::iterator begin() { return streams_.begin(); }
    std::deque<Stream>::iterator end() { return streams_.end(); }

private:
    void serve(Stream& s, TimePoint now);
    void serve_due(TimePoint now);
    int wait(TimePoint now, bool draining);
    int spin(int max);
    void postpone(Stream& s, TimePoint at);
    void add(Stream& s);
    void remove(Stream& s);
    /// The most events one epoll_wait returns: every stream, up to this.
    static constexpr size_t kMaxEventsPerWait = 256;

    UniqueFd epoll_;
    std::deque<Stream> streams_;
    std::vector<size_t> free_;  ///< released slots, for add()
    StreamSetArgs args_;
    std::vector<epoll_event> events_;
    size_t open_ = 0;
    size_t postponed_ = 0;
    TimePoint next_due_ = TimePoint::max();  ///< the earliest postponed stream's due time
    RxSpinStats spin_;
};

/// Makes `fd` blocking, with StreamSet::kPollTime as its SO_RCVTIMEO and SO_SNDTIMEO, for a worker that
/// waits in recv() or send() itself rather than in the set's epoll (a lone flow): its calls still come
/// back that often to look at the clock and the stop token. False (the socket left non-blocking) when the
/// kernel refuses any of it.
bool block_with_poll_time(int fd);

}  // namespace nm

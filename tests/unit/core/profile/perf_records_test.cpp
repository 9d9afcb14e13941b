// The ring-buffer decoder on canned records laid out as perf_event_open(2) documents them.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "core/profile/perf_records.hpp"

namespace {

using nm::profile::RecordBatch;

// Appends the bytes of `v` to `out`.
template <typename T>
void put(std::vector<std::byte>& out, const T& v) {
    const size_t at = out.size();
    out.resize(at + sizeof v);
    std::memcpy(out.data() + at, &v, sizeof v);
}

std::vector<std::byte> sample(uint64_t ip, int32_t pid, int32_t tid, uint64_t time, uint32_t cpu, uint16_t mode) {
    std::vector<std::byte> r;
    put(r, perf_event_header{PERF_RECORD_SAMPLE, mode, 40});
    put(r, ip);
    put(r, pid);
    put(r, tid);
    put(r, time);
    put(r, cpu);
    put(r, uint32_t{0});
    return r;
}

// A side-band record: its body, a NUL-padded string, then the sample_id trailer {pid, tid}, time, {cpu, res}.
std::vector<std::byte> comm(int32_t pid, int32_t tid, const std::string& name, uint64_t time, bool exec) {
    std::vector<std::byte> body;
    put(body, pid);
    put(body, tid);
    std::string padded = name;
    padded.resize((name.size() / 8 + 1) * 8, '\0');
    for (char c : padded) body.push_back(static_cast<std::byte>(c));
    put(body, pid);
    put(body, tid);
    put(body, time);
    put(body, uint64_t{0});
    std::vector<std::byte> r;
    put(r, perf_event_header{PERF_RECORD_COMM, static_cast<uint16_t>(exec ? PERF_RECORD_MISC_COMM_EXEC : 0),
                             static_cast<uint16_t>(sizeof(perf_event_header) + body.size())});
    const size_t at = r.size();
    r.resize(at + body.size());
    std::memcpy(r.data() + at, body.data(), body.size());
    return r;
}

std::vector<std::byte> lost(uint64_t n) {
    std::vector<std::byte> r;
    put(r, perf_event_header{PERF_RECORD_LOST, 0, 8 + 16 + 24});
    put(r, uint64_t{7});
    put(r, n);
    for (int i = 0; i < 3; ++i) put(r, uint64_t{0});
    return r;
}

}  // namespace

TEST_CASE("profile records: samples, comm/exec and lost records decode, a short record is counted malformed", "[unit]") {
    RecordBatch b;
    nm::profile::decode_record(sample(0xffffffff81001234, 42, 43, 1'000'000'123, 1, PERF_RECORD_MISC_KERNEL), b);
    nm::profile::decode_record(sample(0x401000, 42, 44, 1'000'000'200, 0, PERF_RECORD_MISC_USER), b);
    nm::profile::decode_record(comm(50, 50, "ksoftirqd/1", 5, false), b);
    nm::profile::decode_record(comm(51, 51, "cc1plus", 6, true), b);
    nm::profile::decode_record(lost(9), b);
    REQUIRE(b.samples.size() == 2);
    CHECK(b.samples[0].ip == 0xffffffff81001234);
    CHECK(b.samples[0].pid == 42);
    CHECK(b.samples[0].tid == 43);
    CHECK(b.samples[0].time_ns == 1'000'000'123);
    CHECK(b.samples[0].cpu == 1);
    CHECK_FALSE(b.samples[0].user);
    CHECK(b.samples[1].user);
    REQUIRE(b.tasks.size() == 2);
    CHECK(b.tasks[0].kind == nm::profile::TaskEvent::Kind::Comm);
    CHECK(b.tasks[0].text == "ksoftirqd/1");
    CHECK(b.tasks[0].time_ns == 5);
    CHECK(b.tasks[1].kind == nm::profile::TaskEvent::Kind::Exec);
    CHECK(b.tasks[1].text == "cc1plus");
    CHECK(b.lost == 9);
    CHECK(b.malformed == 0);

    auto shorter = sample(1, 2, 3, 4, 0, PERF_RECORD_MISC_KERNEL);
    shorter.resize(24);
    std::memcpy(shorter.data() + 6, "\x18\x00", 2);  // the header says 24 bytes: too short for a sample
    nm::profile::decode_record(shorter, b);
    CHECK(b.malformed == 1);
    CHECK(b.samples.size() == 2);
}

TEST_CASE("profile ring: records are read from tail to head across the end of the area, wrapped ones copied out", "[unit]") {
    // A 128-byte area holding 3 samples (40 bytes each) written from position 100: the second wraps.
    std::vector<std::byte> area(128);
    std::vector<std::byte> stream;
    for (int i = 0; i < 3; ++i) {
        const auto s = sample(0x1000 + i, 10, 10 + i, 100 + i, 0, PERF_RECORD_MISC_KERNEL);
        const size_t at = stream.size();
        stream.resize(at + s.size());
        std::memcpy(stream.data() + at, s.data(), s.size());
    }
    const uint64_t tail = 100;
    for (size_t k = 0; k < stream.size(); ++k) area[(tail + k) % area.size()] = stream[k];
    RecordBatch b;
    const uint64_t done = nm::profile::drain_ring(area, tail, tail + stream.size(), b);
    CHECK(done == tail + stream.size());
    REQUIRE(b.samples.size() == 3);
    for (int i = 0; i < 3; ++i) {
        CHECK(b.samples[i].ip == 0x1000u + i);
        CHECK(b.samples[i].tid == 10 + i);
    }
    CHECK(b.malformed == 0);

    // A header with an impossible size: the rest up to head is skipped and counted.
    std::vector<std::byte> bad(64);
    const perf_event_header tiny{PERF_RECORD_SAMPLE, 0, 4};
    std::memcpy(bad.data(), &tiny, sizeof tiny);
    RecordBatch c;
    CHECK(nm::profile::drain_ring(bad, 0, 40, c) == 40);
    CHECK(c.malformed == 1);
    CHECK(c.samples.empty());
}

#include "core/profile/perf_records.hpp"

#include <algorithm>
#include <cstring>

namespace nm::profile {
namespace {

// Reads the record from the front, bounds-checked: a short record sets `ok` false and reads zeros.
class Reader {
public:
    explicit Reader(std::span<const std::byte> bytes) : bytes_(bytes) {}
    template <typename T>
    T get() {
        T v{};
        if (pos_ + sizeof(T) > bytes_.size()) {
            ok_ = false;
            return v;
        }
        std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
        pos_ += sizeof(T);
        return v;
    }
    // A NUL-terminated string padded to 8 bytes, ending before the trailing sample_id.
    std::string string(size_t trailer) {
        const size_t end = bytes_.size() >= trailer ? bytes_.size() - trailer : 0;
        if (pos_ >= end) {
            ok_ = false;
            return {};
        }
        const auto* start = reinterpret_cast<const char*>(bytes_.data() + pos_);
        const size_t len = strnlen(start, end - pos_);
        pos_ = end;
        return std::string(start, len);
    }
    bool ok() const { return ok_; }

private:
    std::span<const std::byte> bytes_;
    size_t pos_ = 0;
    bool ok_ = true;
};

// The sample_id trailer of a side-band record for kSampleType: {pid, tid}, time, {cpu, res}.
constexpr size_t kTrailer = 8 + 8 + 8;

struct Trailer {
    int32_t pid = 0, tid = 0;
    uint64_t time = 0;
};

Trailer trailer_of(std::span<const std::byte> record) {
    Trailer t;
    if (record.size() < sizeof(perf_event_header) + kTrailer) return t;
    Reader r(record.subspan(record.size() - kTrailer));
    t.pid = r.get<int32_t>();
    t.tid = r.get<int32_t>();
    t.time = r.get<uint64_t>();
    return t;
}

}  // namespace

void RecordBatch::append(RecordBatch&& other) {
    samples.insert(samples.end(), other.samples.begin(), other.samples.end());
    tasks.insert(tasks.end(), std::make_move_iterator(other.tasks.begin()), std::make_move_iterator(other.tasks.end()));
    lost += other.lost;
    malformed += other.malformed;
}

void decode_record(std::span<const std::byte> record, RecordBatch& out) {
    Reader r(record);
    const auto header = r.get<perf_event_header>();
    if (!r.ok() || header.size != record.size()) {
        ++out.malformed;
        return;
    }
    // A task event read whole is kept, a short one counted malformed; COMM and MMAP end alike: their text up
    // to the sample_id trailer, the time from the trailer.
    const auto keep = [&](TaskEvent e) {
        if (r.ok()) out.tasks.push_back(std::move(e));
        else ++out.malformed;
    };
    const auto keep_named = [&](TaskEvent e) {
        e.text = r.string(kTrailer);
        e.time_ns = trailer_of(record).time;
        keep(std::move(e));
    };
    switch (header.type) {
        case PERF_RECORD_SAMPLE: {
            Sample s;
            s.ip = r.get<uint64_t>();
            s.pid = r.get<int32_t>();
            s.tid = r.get<int32_t>();
            s.time_ns = r.get<uint64_t>();
            s.cpu = r.get<uint32_t>();
            r.get<uint32_t>();
            const auto mode = header.misc & PERF_RECORD_MISC_CPUMODE_MASK;
            s.user = mode == PERF_RECORD_MISC_USER || mode == PERF_RECORD_MISC_GUEST_USER;
            if (r.ok()) out.samples.push_back(s);
            else ++out.malformed;
            return;
        }
        case PERF_RECORD_COMM: {
            TaskEvent e;
            e.kind = (header.misc & PERF_RECORD_MISC_COMM_EXEC) ? TaskEvent::Kind::Exec : TaskEvent::Kind::Comm;
            e.pid = r.get<int32_t>();
            e.tid = r.get<int32_t>();
            keep_named(std::move(e));
            return;
        }
        case PERF_RECORD_MMAP: {
            TaskEvent e;
            e.kind = TaskEvent::Kind::Mmap;
            e.pid = r.get<int32_t>();
            e.tid = r.get<int32_t>();
            e.addr = r.get<uint64_t>();
            e.len = r.get<uint64_t>();
            e.pgoff = r.get<uint64_t>();
            keep_named(std::move(e));
            return;
        }
        case PERF_RECORD_FORK:
        case PERF_RECORD_EXIT: {
            TaskEvent e;
            e.kind = header.type == PERF_RECORD_FORK ? TaskEvent::Kind::Fork : TaskEvent::Kind::Exit;
            e.pid = r.get<int32_t>();
            e.parent_pid = r.get<int32_t>();
            e.tid = r.get<int32_t>();
            r.get<int32_t>();  // ptid
            e.time_ns = r.get<uint64_t>();
            keep(std::move(e));
            return;
        }
        case PERF_RECORD_LOST: {
            r.get<uint64_t>();  // id
            const auto lost = r.get<uint64_t>();
            if (r.ok()) out.lost += lost;
            else ++out.malformed;
            return;
        }
        case PERF_RECORD_LOST_SAMPLES: {
            const auto lost = r.get<uint64_t>();
            if (r.ok()) out.lost += lost;
            else ++out.malformed;
            return;
        }
        default: return;
    }
}

uint64_t drain_ring(std::span<const std::byte> data, uint64_t tail, uint64_t head, RecordBatch& out) {
    const uint64_t size = data.size();
    if (size == 0 || (size & (size - 1)) != 0) return head;
    std::vector<std::byte> wrapped;
    while (tail < head) {
        if (head - tail < sizeof(perf_event_header)) {
            ++out.malformed;
            return head;
        }
        // Records are 8-byte aligned and the area's size is a multiple of 8: a header never wraps.
        perf_event_header header;
        std::memcpy(&header, data.data() + (tail & (size - 1)), sizeof header);
        if (header.size < sizeof header || header.size > head - tail || header.size > size) {
            ++out.malformed;
            return head;
        }
        const uint64_t at = tail & (size - 1);
        if (at + header.size <= size) {
            decode_record(data.subspan(at, header.size), out);
        } else {
            const size_t first = size - at;
            wrapped.resize(header.size);
            std::memcpy(wrapped.data(), data.data() + at, first);
            std::memcpy(wrapped.data() + first, data.data(), header.size - first);
            decode_record(wrapped, out);
        }
        tail += header.size;
    }
    return head;
}

}  // namespace nm::profile

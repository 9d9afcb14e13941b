#include "core/profile/task_table.hpp"

#include <dirent.h>

#include <charconv>

#include "core/base/file_text.hpp"
#include "core/base/text_lines.hpp"

namespace nm::profile {
namespace {

bool hex(std::string_view s, uint64_t& out) {
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out, 16);
    return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

std::vector<Mapping> parse_proc_maps(std::string_view text) {
    // "55d4c8a00000-55d4c8b00000 r-xp 00012000 fd:01 1234   /usr/bin/nicmatrix"
    std::vector<Mapping> out;
    for_each_line(text, [&](std::string_view line) {
        std::string_view fields[5];
        size_t at = 0;
        bool ok = true;
        for (auto& f : fields) {
            while (at < line.size() && line[at] == ' ') ++at;
            const size_t sp = line.find(' ', at);
            if (sp == std::string_view::npos) {
                ok = false;
                break;
            }
            f = line.substr(at, sp - at);
            at = sp;
        }
        if (!ok) return;
        while (at < line.size() && line[at] == ' ') ++at;
        const std::string_view path = line.substr(at);
        const auto& range = fields[0];
        const auto& perms = fields[1];
        if (perms.size() < 3 || perms[2] != 'x' || path.empty() || path.front() != '/') return;
        const size_t dash = range.find('-');
        Mapping m;
        if (dash == std::string_view::npos || !hex(range.substr(0, dash), m.start) || !hex(range.substr(dash + 1), m.end) ||
            !hex(fields[2], m.pgoff)) {
            return;
        }
        m.path = std::string(path);
        out.push_back(std::move(m));
    });
    return out;
}

void TaskTable::apply(const TaskEvent& e) {
    using Kind = TaskEvent::Kind;
    switch (e.kind) {
        case Kind::Exec:
            maps_[e.pid].clear();
            comm_[e.tid] = e.text;
            break;
        case Kind::Comm: comm_[e.tid] = e.text; break;
        case Kind::Mmap: maps_[e.pid].push_back({e.addr, e.addr + e.len, e.pgoff, e.text}); break;
        case Kind::Fork:
            // A new process (not a new thread of the same one) starts as a copy of its parent.
            if (e.pid != e.parent_pid) {
                if (const auto it = maps_.find(e.parent_pid); it != maps_.end() && !maps_.count(e.pid)) maps_[e.pid] = it->second;
            }
            if (const auto it = comm_.find(e.parent_pid); it != comm_.end() && !comm_.count(e.tid)) comm_[e.tid] = it->second;
            break;
        case Kind::Exit: break;  // its samples came before; the mappings stay to name them
    }
}

const Mapping* TaskTable::mapping(int32_t pid, uint64_t addr) const {
    const auto it = maps_.find(pid);
    if (it == maps_.end()) return nullptr;
    for (auto m = it->second.rbegin(); m != it->second.rend(); ++m) {
        if (addr >= m->start && addr < m->end) return &*m;
    }
    return nullptr;
}

const std::string* TaskTable::comm(int32_t tid) const {
    const auto it = comm_.find(tid);
    return it == comm_.end() ? nullptr : &it->second;
}

std::vector<Mapping> read_process_maps(int32_t pid) { return parse_proc_maps(read_file_text("/proc/" + std::to_string(pid) + "/maps")); }

std::string read_comm(int32_t tid) {
    std::string s = read_file_text("/proc/" + std::to_string(tid) + "/comm");
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
    return s;
}

TaskTable snapshot_tasks() {
    TaskTable t;
    DIR* dir = ::opendir("/proc");
    if (dir == nullptr) return t;
    while (const dirent* e = ::readdir(dir)) {
        int32_t pid = 0;
        const std::string_view name(e->d_name);
        const auto [p, ec] = std::from_chars(name.data(), name.data() + name.size(), pid);
        if (ec != std::errc() || p != name.data() + name.size() || pid <= 0) continue;
        std::string comm = read_comm(pid);
        if (comm.empty()) continue;
        t.set_comm(pid, std::move(comm));
        if (auto maps = read_process_maps(pid); !maps.empty()) t.set_maps(pid, std::move(maps));
    }
    ::closedir(dir);
    return t;
}

}  // namespace nm::profile

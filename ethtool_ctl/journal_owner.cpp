#include "ethtool_ctl/journal_owner.hpp"

#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/base/error.hpp"

namespace nm {
namespace {

constexpr size_t kMaxCommand = 200;

std::optional<std::string> read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::optional<ProcPidStat> stat_of(int32_t pid) {
    if (pid <= 0) return std::nullopt;
    const auto text = read_text("/proc/" + std::to_string(pid) + "/stat");
    return text ? parse_proc_pid_stat(*text) : std::nullopt;
}

}  // namespace

std::optional<ProcPidStat> parse_proc_pid_stat(std::string_view text) {
    const auto close = text.rfind(')');
    if (close == std::string_view::npos || text.find('(') > close) return std::nullopt;
    std::vector<std::string> fields;
    std::istringstream in(std::string(text.substr(close + 1)));
    for (std::string f; in >> f;) fields.push_back(f);
    // After ')' come fields 3 (state) .. 52; the start time is field 22.
    constexpr size_t kStartTime = 22 - 3;
    if (fields.size() <= kStartTime || fields[0].size() != 1) return std::nullopt;
    ProcPidStat out;
    out.state = fields[0][0];
    try {
        size_t used = 0;
        out.start_time = std::stoull(fields[kStartTime], &used);
        if (used != fields[kStartTime].size()) return std::nullopt;
    } catch (const std::exception&) {
        return std::nullopt;
    }
    return out;
}

std::string current_boot_id() {
    auto text = read_text("/proc/sys/kernel/random/boot_id");
    if (!text) throw system_error("read /proc/sys/kernel/random/boot_id", errno);
    while (!text->empty() && (text->back() == '\n' || text->back() == ' ')) text->pop_back();
    return *text;
}

JournalOwner this_process() {
    JournalOwner o;
    o.pid = static_cast<int32_t>(::getpid());
    const auto stat = stat_of(o.pid);
    if (!stat) throw Error(ErrorKind::Failed, "read /proc/self/stat: not a stat line");
    o.start_time = stat->start_time;
    o.boot_id = current_boot_id();
    std::string command = read_text("/proc/self/cmdline").value_or("");
    for (char& c : command) {
        if (c == '\0') c = ' ';
    }
    while (!command.empty() && command.back() == ' ') command.pop_back();
    if (command.size() > kMaxCommand) command = command.substr(0, kMaxCommand - 3) + "...";
    o.command = command;
    return o;
}

OwnerStatus owner_status(const JournalOwner& owner, const std::string& boot_id, const std::optional<ProcPidStat>& stat) {
    if (owner.pid <= 0) return OwnerStatus::Gone;  // an entry without an owner (an older journal)
    if (owner.boot_id != boot_id) return OwnerStatus::EarlierBoot;
    if (!stat || stat->start_time != owner.start_time) return OwnerStatus::Gone;
    // A zombie has exited: it will never restore anything.
    if (stat->state == 'Z' || stat->state == 'X') return OwnerStatus::Gone;
    return OwnerStatus::Alive;
}

OwnerStatus owner_status(const JournalOwner& owner) { return owner_status(owner, current_boot_id(), stat_of(owner.pid)); }

std::string describe_owner(const JournalOwner& owner) {
    std::string text = "pid " + std::to_string(owner.pid);
    if (!owner.command.empty()) text += " (" + owner.command + ")";
    return text;
}

}  // namespace nm

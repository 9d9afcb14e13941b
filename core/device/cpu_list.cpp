#include "core/device/cpu_list.hpp"

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "core/base/error.hpp"

namespace nm {
namespace {

constexpr unsigned kMaxCpu = 8192;  // CONFIG_NR_CPUS tops out here

unsigned parse_cpu(std::string_view s, std::string_view whole) {
    unsigned v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v >= kMaxCpu) {
        throw usage_error("expected a CPU list such as \"0-1\", \"0,2\", \"all\" or \"none\", got \"" + std::string(whole) + "\"");
    }
    return v;
}

std::set<unsigned> parse_syntax(std::string_view text) {
    std::set<unsigned> out;
    if (text.empty() || text == "none") return out;
    size_t start = 0;
    while (start <= text.size()) {
        const size_t comma = text.find(',', start);
        const std::string_view part = text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
        const size_t dash = part.find('-');
        const unsigned lo = parse_cpu(part.substr(0, dash), text);
        const unsigned hi = dash == std::string_view::npos ? lo : parse_cpu(part.substr(dash + 1), text);
        if (hi < lo) throw usage_error("expected a CPU range low-high, got \"" + std::string(part) + "\" in \"" + std::string(text) + "\"");
        for (unsigned c = lo; c <= hi; ++c) out.insert(c);
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    return out;
}

}  // namespace

std::set<unsigned> parse_cpu_list(std::string_view text, unsigned cpu_count) {
    if (text == "all") {
        if (cpu_count == 0) throw usage_error("\"all\" CPUs: the number of CPUs is not known here");
        std::set<unsigned> all;
        for (unsigned c = 0; c < cpu_count; ++c) all.insert(c);
        return all;
    }
    auto cpus = parse_syntax(text);
    if (cpu_count != 0 && !cpus.empty() && *cpus.rbegin() >= cpu_count) {
        throw usage_error("CPU " + std::to_string(*cpus.rbegin()) + " in \"" + std::string(text) + "\" does not exist on this host");
    }
    return cpus;
}

std::string format_cpu_list(const std::set<unsigned>& cpus) {
    if (cpus.empty()) return "none";
    std::string out;
    for (auto it = cpus.begin(); it != cpus.end();) {
        const unsigned lo = *it;
        unsigned hi = lo;
        ++it;
        while (it != cpus.end() && *it == hi + 1) hi = *it++;
        if (!out.empty()) out += ',';
        out += std::to_string(lo);
        if (hi != lo) {
            out += '-';
            out += std::to_string(hi);
        }
    }
    return out;
}

std::string cpu_mask_hex(const std::set<unsigned>& cpus) {
    if (cpus.empty()) return "0";
    std::vector<uint32_t> words(*cpus.rbegin() / 32 + 1, 0);
    for (unsigned c : cpus) words[c / 32] |= 1U << (c % 32);
    std::string out;
    char buf[16];
    for (size_t i = words.size(); i-- > 0;) {
        std::snprintf(buf, sizeof buf, i + 1 == words.size() ? "%x" : "%08x", words[i]);
        out += buf;
        if (i != 0) out += ",";
    }
    return out;
}

std::set<unsigned> parse_cpu_mask_hex(std::string_view mask) {
    std::set<unsigned> out;
    unsigned bit = 0;
    for (size_t i = mask.size(); i-- > 0;) {
        const char ch = mask[i];
        if (ch == ',' || ch == '\n' || ch == ' ') continue;
        unsigned v = 0;
        if (ch >= '0' && ch <= '9') v = static_cast<unsigned>(ch - '0');
        else if (ch >= 'a' && ch <= 'f') v = static_cast<unsigned>(ch - 'a' + 10);
        else if (ch >= 'A' && ch <= 'F') v = static_cast<unsigned>(ch - 'A' + 10);
        else throw Error(ErrorKind::Failed, "not a CPU mask: \"" + std::string(mask) + "\"");
        for (unsigned b = 0; b < 4; ++b) {
            if (v & (1U << b)) out.insert(bit + b);
        }
        bit += 4;
    }
    return out;
}

std::string canonical_cpu_list(std::string_view text) {
    if (text == "all" || text == "none") return std::string(text);
    return format_cpu_list(parse_syntax(text));
}

}  // namespace nm

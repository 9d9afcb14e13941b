#include "agent/log_line.hpp"

#include <algorithm>
#include <cstdio>

namespace nm {

std::string safe_log_line(std::string_view line) {
    std::string out;
    out.reserve(std::min(line.size(), kMaxLogLine) + 8);
    for (const char ch : line) {
        const auto c = static_cast<unsigned char>(ch);
        if (c < 0x20 || c >= 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(c));
            out += buf;
        } else {
            out += ch;
        }
        if (out.size() > kMaxLogLine) {
            out.resize(kMaxLogLine - 3);
            out += "...";
            break;
        }
    }
    return out;
}

std::string quoted_value(const Json& value) {
    std::string text = value.dump(-1, ' ', true, Json::error_handler_t::replace);
    if (text.size() > 80) text = text.substr(0, 77) + "...";
    return text;
}

}  // namespace nm

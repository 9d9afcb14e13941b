#include "core/traffic/dscp.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

#include "core/base/error.hpp"

namespace nm {
namespace {

constexpr std::pair<const char*, int> kDscpNames[] = {
    {"CS0", 0},   {"CS1", 8},   {"CS2", 16},  {"CS3", 24},  {"CS4", 32},  {"CS5", 40},  {"CS6", 48},
    {"CS7", 56},  {"AF11", 10}, {"AF12", 12}, {"AF13", 14}, {"AF21", 18}, {"AF22", 20}, {"AF23", 22},
    {"AF31", 26}, {"AF32", 28}, {"AF33", 30}, {"AF41", 34}, {"AF42", 36}, {"AF43", 38}, {"EF", 46},
};

}  // namespace

int parse_dscp(const std::string& text, const std::string& field) {
    std::string upper = text;
    std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    for (const auto& [name, value] : kDscpNames) {
        if (upper == name) return value;
    }
    const bool hex = upper.size() > 2 && upper.compare(0, 2, "0X") == 0;
    const std::string digits = hex ? upper.substr(2) : upper;
    const bool numeric = !digits.empty() && digits.size() <= 4 && std::all_of(digits.begin(), digits.end(), [hex](unsigned char c) {
        return hex ? std::isxdigit(c) != 0 : std::isdigit(c) != 0;
    });
    if (numeric) {
        const int v = std::stoi(digits, nullptr, hex ? 16 : 10);
        if (v >= 0 && v <= 63) return v;
    }
    std::string names;
    for (const auto& [name, value] : kDscpNames) names += std::string(names.empty() ? "" : ", ") + name;
    throw usage_error(field + ": \"" + text + "\" is not a DSCP code point; give 0..63 (or 0x00..0x3f) or one of " + names);
}

std::optional<std::string> dscp_name(int dscp) {
    for (const auto& [name, value] : kDscpNames) {
        if (value == dscp) return std::string(name);
    }
    return std::nullopt;
}

}  // namespace nm

#include "cli/test_spec_flags.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <type_traits>

#include "cli/scaled_number.hpp"
#include "core/base/error.hpp"
#include "core/traffic/test_spec_fields.hpp"

namespace nm::cli {
namespace {

// "-l,--length" -> "--length": the name an error message gives.
std::string long_name(std::string_view names) {
    const auto at = names.find("--");
    return std::string(at == std::string_view::npos ? names : names.substr(at, names.find(',', at) - at));
}

const char* unit_name(FieldUnit u) {
    switch (u) {
        case FieldUnit::None: return "";
        case FieldUnit::Bytes: return "bytes";
        case FieldUnit::Seconds: return "s";
        case FieldUnit::Microseconds: return "us";
        case FieldUnit::BitsPerSecond: return "bit/s";
        case FieldUnit::PacketsPerSecond: return "packets/s";
        case FieldUnit::Hertz: return "Hz";
        case FieldUnit::Milliseconds: return "ms";
        case FieldUnit::Percent: return "%";
    }
    return "";
}

}  // namespace

TestSpecFlags::TestSpecFlags(CLI::App& cmd, TestSpec& spec, const HandFlags& before) {
    size_t used = 0;
    for_each_test_spec_field(spec, [&](const TestSpecField& f, auto& member) {
        using T = std::decay_t<decltype(member)>;
        if (const auto hand = before.find(f.key); hand != before.end()) {
            hand->second();
            ++used;
        }
        const CliFlag& flag = f.flag;
        if (*flag.names == '\0') return;
        CLI::Option* o = nullptr;
        if constexpr (std::is_same_v<T, bool>) {
            o = cmd.add_flag(flag.names, member, flag.help);
        } else if constexpr (std::is_arithmetic_v<T> || std::is_same_v<T, std::string>) {
            o = flag.options & kFlagScaled ? cmd.add_option(flag.names, texts_[f.key], flag.help) : cmd.add_option(flag.names, member, flag.help);
        } else {
            throw std::logic_error(std::string("test spec field ") + f.key + ": a flag for a member of this type is written by hand");
        }
        if (flag.options & kFlagRequired) o->required();
        if (flag.options & kFlagShowDefault) o->capture_default_str();
        if (flag.options & kFlagValueAsType) o->type_name(flag.value);
        if (*flag.needs != '\0') o->needs(options_.at(flag.needs));
        options_[f.key] = o;
    });
    if (used != before.size()) throw std::logic_error("TestSpecFlags: a flag written by hand is keyed by a field the table lacks");
}

CLI::Option* TestSpecFlags::option(std::string_view key) const {
    const auto it = options_.find(key);
    return it == options_.end() ? nullptr : it->second;
}

bool TestSpecFlags::given(std::string_view key) const {
    if (const auto text = texts_.find(key); text != texts_.end()) return !text->second.empty();
    const CLI::Option* o = option(key);
    return o != nullptr && o->count() > 0;
}

void TestSpecFlags::apply_scaled(TestSpec& spec) const {
    for_each_test_spec_field(spec, [&](const TestSpecField& f, auto& member) {
        using T = std::decay_t<decltype(member)>;
        const auto text = texts_.find(f.key);
        if (text == texts_.end() || text->second.empty()) return;
        const std::string flag = long_name(f.flag.names);
        const double v = parse_scaled(text->second, flag, f.unit == FieldUnit::Bytes);
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
            const double max = std::min(static_cast<double>(std::numeric_limits<T>::max()), 1e18);
            if (v > max) throw usage_error(flag + ": \"" + text->second + "\" is too large");
            member = static_cast<T>(v);
            if ((f.flag.options & kFlagPositive) && member == 0) throw usage_error(flag + ": must be > 0");
        } else if constexpr (std::is_floating_point_v<T>) {
            member = v;
        }
    });
}

nlohmann::json test_spec_flags_json() {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& f : kTestSpecFields) {
        if (*f.flag.names == '\0') continue;
        nlohmann::json names = nlohmann::json::array();
        const std::string_view all = f.flag.names;
        for (size_t at = 0; at <= all.size();) {
            const size_t comma = std::min(all.find(',', at), all.size());
            names.push_back(std::string(all.substr(at, comma - at)));
            at = comma + 1;
        }
        rows.push_back({{"key", f.key}, {"flags", names}, {"value", f.flag.value}, {"unit", unit_name(f.unit)}, {"help", f.flag.help}});
    }
    return nlohmann::json{{"run", rows}};
}

}  // namespace nm::cli

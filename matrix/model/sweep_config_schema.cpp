#include "matrix/model/sweep_config_schema.hpp"

#include <cmath>
#include <string>
#include <type_traits>

#include "core/base/json.hpp"
#include "matrix/model/sweep_config_fields.hpp"

namespace nm {

namespace {

// A bound or default as the committed file writes it: a whole number as an integer (10, not 10.0).
Json schema_number(double v) {
    if (std::floor(v) == v && std::fabs(v) < 9007199254740992.0) return Json(static_cast<int64_t>(v));
    return Json(v);
}

template <typename Record>
Json record_schema() {
    Json properties = Json::object();
    Json required = Json::array();
    const Record defaults{};
    for_each_sweep_field(defaults, [&](const SweepConfigField& f, const auto& fallback) {
        using T = std::decay_t<decltype(fallback)>;
        static_assert(std::is_arithmetic_v<T>, "a table row is a number or a switch; other keys are H(...) keys");
        Json s = Json::object();
        if constexpr (std::is_same_v<T, bool>) {
            s["type"] = "boolean";
        } else {
            s["type"] = std::is_integral_v<T> ? "integer" : "number";
            s[(f.options & kSweepKeyAboveMin) ? "exclusiveMinimum" : "minimum"] = schema_number(f.min);
            s["maximum"] = schema_number(f.max);
        }
        if (f.options & kSweepKeyRequired) {
            required.push_back(f.key);  // no default: the user says it
        } else if constexpr (std::is_same_v<T, bool>) {
            s["default"] = fallback;
        } else {
            s["default"] = schema_number(static_cast<double>(fallback));
        }
        s["description"] = f.help;
        properties[f.key] = s;
    });
    return Json{{"keys", sweep_record_keys<Record>()}, {"required", required}, {"properties", properties}};
}

}  // namespace

Json sweep_config_schema() {
    return Json{
        {"config", record_schema<SweepConfig>()}, {"precision", record_schema<PrecisionSpec>()}, {"interference", record_schema<InterferenceSpec>()}};
}

}  // namespace nm

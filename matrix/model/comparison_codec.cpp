// JSON of a comparison (compare --format json, report --against): each row's figures, ratio, interval,
// p-values and verdict, as Python's nicmatrix.compare reads them.
#include <optional>

#include "matrix/model/comparison_codec.hpp"
#include "matrix/model/json_node.hpp"

namespace nm {

namespace {

constexpr std::pair<RatioVerdict, const char*> kVerdicts[] = {{RatioVerdict::Significant, "significant"},
                                                              {RatioVerdict::NotSignificant, "not_significant"},
                                                              {RatioVerdict::TooFew, "too_few"},
                                                              {RatioVerdict::NotTestable, "not_testable"},
                                                              {RatioVerdict::Equivalent, "equivalent"}};
constexpr std::pair<PAdjustment, const char*> kAdjustments[] = {
    {PAdjustment::Holm, "holm"}, {PAdjustment::BenjaminiHochberg, "bh"}, {PAdjustment::None, "none"}};

}  // namespace

void to_json(Json& j, const RatioVerdict& v) { j = sweep_json::enum_name(v, kVerdicts); }
void from_json(const Json& j, RatioVerdict& v) { v = sweep_json::enum_value(sweep_json::Node(j, "/verdict"), kVerdicts); }

void to_json(Json& j, const Comparison& v) {
    const auto maybe = [](const std::optional<double>& x) { return x ? Json(*x) : Json(nullptr); };
    Json rows = Json::array();
    for (const auto& r : v.rows) {
        rows.push_back(Json{{"profile", r.profile},
                            {"traffic", r.traffic},
                            {"mtu", r.mtu},
                            {"key_a", r.key_a},
                            {"key_b", r.key_b},
                            {"features_requested", r.features_requested},
                            {"test", r.test},
                            {"status_a", r.status_a},
                            {"status_b", r.status_b},
                            {"a", r.a ? Json(*r.a) : Json(nullptr)},
                            {"b", r.b ? Json(*r.b) : Json(nullptr)},
                            {"precision_met_a", r.precision_met_a ? Json(*r.precision_met_a) : Json(nullptr)},
                            {"precision_met_b", r.precision_met_b ? Json(*r.precision_met_b) : Json(nullptr)},
                            {"disturbed_a", r.disturbed_a},
                            {"disturbed_b", r.disturbed_b},
                            {"ratio", maybe(r.ratio)},
                            {"ratio_ci_low", maybe(r.ratio_ci_low)},
                            {"ratio_ci_high", maybe(r.ratio_ci_high)},
                            {"ratio_ci_confidence", maybe(r.ratio_ci_confidence)},
                            {"verdict", r.verdict},
                            {"verdict_unadjusted", r.verdict_unadjusted},
                            {"significant", r.significant},
                            {"equivalent", r.equivalent},
                            {"p_value", maybe(r.p_value)},
                            {"p_adjusted", maybe(r.p_adjusted)},
                            {"equivalence_p_value", maybe(r.equivalence_p_value)},
                            {"equivalence_p_adjusted", maybe(r.equivalence_p_adjusted)},
                            {"why", r.why}});
    }
    j = Json{{"metric", v.metric},
             {"a", v.label_a},
             {"b", v.label_b},
             {"confidence", v.confidence},
             {"method", "Hodges-Lehmann/Mann-Whitney interval of the ratio of medians, exact, on log values"},
             {"adjustment", sweep_json::enum_name(v.adjustment, kAdjustments)},
             {"tested_cells", v.tested_cells},
             {"margin_pct", maybe(v.margin_pct)},
             {"reference", v.reference.empty() ? Json(nullptr) : Json(v.reference)},
             {"rows", rows},
             {"only_a", v.only_a},
             {"only_b", v.only_b},
             {"host_differences", v.host_differences}};
}

}  // namespace nm

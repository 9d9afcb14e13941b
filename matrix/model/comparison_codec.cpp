// JSON of a comparison (compare --format json, report --against): each row's figures, ratio, interval,
// p-values and verdict, as Python's nicmatrix.compare reads them. A row is its field list's (CompareRow in
// report_types.hpp); the comparison's own keys are by hand (the method's words, the adjustment's name).
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
    write_fields(j, v, json_fields_and_more(&v));
    j["method"] = "Hodges-Lehmann/Mann-Whitney interval of the ratio of medians, exact, on log values";
    j["adjustment"] = sweep_json::enum_name(v.adjustment, kAdjustments);
}

}  // namespace nm

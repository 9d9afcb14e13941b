// JSON of device control beyond the field lists (device_types.hpp): outcomes as words, a link change's ends
// (each end's settle figures flattened beside its name), and an apply's computed all_requested_hold.
#include "core/base/error.hpp"
#include "core/base/json_optional_field.hpp"
#include "core/base/json_words.hpp"
#include "core/device/device_codec.hpp"

namespace nm {

namespace {

constexpr std::pair<SettingOutcome, const char*> kOutcomes[] = {
    {SettingOutcome::Applied, "applied"},         {SettingOutcome::AlreadySet, "already_set"}, {SettingOutcome::Fixed, "fixed"},
    {SettingOutcome::Unsupported, "unsupported"}, {SettingOutcome::SideEffect, "side_effect"},
};

}  // namespace

void to_json(Json& j, const SettingOutcome& v) { word_to_json(j, v, kOutcomes); }
void from_json(const Json& j, SettingOutcome& v) { word_from_json(j, v, kOutcomes, "outcome"); }

void to_json(Json& j, const ChangeLink& v) {
    Json ends = Json::array();
    for (const auto& e : v.ends) {
        Json one = e.link;
        one["end"] = e.end;
        one["ifname"] = e.ifname;
        ends.push_back(one);
    }
    j = Json{{"link_down_s", v.link_down_s}, {"settle_s", v.settle_s}, {"ends", ends}};
}

void from_json(const Json& j, ChangeLink& v) {
    j.at("link_down_s").get_to(v.link_down_s);
    j.at("settle_s").get_to(v.settle_s);
    if (const auto it = j.find("ends"); it != j.end()) {
        for (const auto& e : *it) {
            ChangeLink::End one;
            e.at("end").get_to(one.end);
            e.at("ifname").get_to(one.ifname);
            one.link = e.get<LinkSettle>();
            v.ends.push_back(std::move(one));
        }
    }
}

// The listed fields (device_types.hpp) and the computed all_requested_hold, written for the reader, not read.
void to_json(Json& j, const ApplyReport& v) {
    write_fields(j, v, json_fields_and_more(&v));
    j["all_requested_hold"] = v.all_requested_hold();
}

void from_json(const Json& j, ApplyReport& v) { read_fields(j, v, json_fields_and_more(&v)); }

}  // namespace nm

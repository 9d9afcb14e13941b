#include "core/base/error.hpp"
#include "core/base/device_codec.hpp"
#include "core/base/json_optional_field.hpp"

namespace nm {

using codec::opt;
using codec::req;

namespace {

#define NM_COUNTER_FIELDS(X)                                                                                   \
    X(rx_packets) X(tx_packets) X(rx_bytes) X(tx_bytes) X(rx_errors) X(tx_errors) X(rx_dropped) X(tx_dropped) \
    X(multicast) X(collisions) X(rx_length_errors) X(rx_over_errors) X(rx_crc_errors) X(rx_frame_errors)      \
    X(rx_fifo_errors) X(rx_missed_errors) X(tx_aborted_errors) X(tx_carrier_errors) X(tx_fifo_errors)         \
    X(tx_heartbeat_errors) X(tx_window_errors) X(rx_nohandler)

constexpr std::pair<SettingOutcome, const char*> kOutcomes[] = {
    {SettingOutcome::Applied, "applied"}, {SettingOutcome::AlreadySet, "already_set"}, {SettingOutcome::Fixed, "fixed"},
    {SettingOutcome::Unsupported, "unsupported"}, {SettingOutcome::SideEffect, "side_effect"},
};

}  // namespace

void to_json(Json& j, const FeatureState& v) { j = Json{{"active", v.active}, {"wanted", v.wanted}, {"fixed", v.fixed}}; }

void from_json(const Json& j, FeatureState& v) {
    j.at("active").get_to(v.active);
    j.at("wanted").get_to(v.wanted);
    j.at("fixed").get_to(v.fixed);
}

void to_json(Json& j, const DriverInfo& v) {
    j = Json{{"driver", v.driver}, {"version", v.version}, {"firmware", v.firmware}, {"bus_info", v.bus_info}};
}

void from_json(const Json& j, DriverInfo& v) {
    opt(j, "driver", v.driver);
    opt(j, "version", v.version);
    opt(j, "firmware", v.firmware);
    opt(j, "bus_info", v.bus_info);
}

void to_json(Json& j, const LinkCounters& v) {
    j = Json::object();
#define NM_PUT(f) j[#f] = v.f;
    NM_COUNTER_FIELDS(NM_PUT)
#undef NM_PUT
}

void from_json(const Json& j, LinkCounters& v) {
#define NM_GET(f) opt(j, #f, v.f);
    NM_COUNTER_FIELDS(NM_GET)
#undef NM_GET
}

void to_json(Json& j, const LinkIdentity& v) {
    j = Json{{"netns_dev", v.netns_dev}, {"netns_ino", v.netns_ino}, {"ifindex", v.ifindex},
             {"perm_address", v.perm_address}, {"kind", v.kind}};
}

void from_json(const Json& j, LinkIdentity& v) {
    opt(j, "netns_dev", v.netns_dev);
    opt(j, "netns_ino", v.netns_ino);
    opt(j, "ifindex", v.ifindex);
    opt(j, "perm_address", v.perm_address);
    opt(j, "kind", v.kind);
}

void to_json(Json& j, const LinkState& v) {
    j = Json{{"name", v.name},         {"netns", v.netns},     {"identity", v.identity}, {"driver", v.driver},
             {"speed_mbps", nullptr},  {"duplex", v.duplex},   {"operstate", v.operstate},
             {"mtu", v.mtu},           {"mtu_min", v.mtu_min}, {"mtu_max", v.mtu_max},
             {"features", v.features}, {"feature_order", v.feature_order},
             {"rings", v.rings},       {"coalesce", v.coalesce}, {"channels", v.channels},
             {"tuning", v.tuning},     {"counters", v.counters}};
    if (v.speed_mbps) j["speed_mbps"] = *v.speed_mbps;
}

void from_json(const Json& j, LinkState& v) {
    j.at("name").get_to(v.name);
    opt(j, "netns", v.netns);
    opt(j, "identity", v.identity);
    opt(j, "driver", v.driver);
    opt(j, "speed_mbps", v.speed_mbps);
    opt(j, "duplex", v.duplex);
    opt(j, "operstate", v.operstate);
    req(j, "mtu", v.mtu);
    opt(j, "mtu_min", v.mtu_min);
    opt(j, "mtu_max", v.mtu_max);
    opt(j, "features", v.features);
    opt(j, "feature_order", v.feature_order);
    opt(j, "rings", v.rings);
    opt(j, "coalesce", v.coalesce);
    opt(j, "channels", v.channels);
    opt(j, "tuning", v.tuning);
    opt(j, "counters", v.counters);
}

void to_json(Json& j, const LinkSettings& v) {
    j = Json{{"features", v.features}};
    j["mtu"] = v.mtu ? Json(*v.mtu) : Json(nullptr);
    if (!v.tuning.empty()) j["tuning"] = v.tuning;
}

void from_json(const Json& j, LinkSettings& v) {
    opt(j, "mtu", v.mtu);
    opt(j, "features", v.features);
    opt(j, "tuning", v.tuning);
}

void to_json(Json& j, const SettingOutcome& v) {
    for (const auto& [o, word] : kOutcomes) {
        if (o == v) j = word;
    }
}

void from_json(const Json& j, SettingOutcome& v) {
    const auto s = j.get<std::string>();
    for (const auto& [o, word] : kOutcomes) {
        if (s == word) {
            v = o;
            return;
        }
    }
    throw usage_error("outcome: expected applied, already_set, fixed, unsupported or side_effect, got \"" + s + "\"");
}

void to_json(Json& j, const FeatureChange& v) {
    j = Json{{"name", v.name}, {"requested_as", v.requested_as}, {"requested", nullptr},
             {"before", v.before}, {"after", v.after}, {"outcome", v.outcome}};
    if (v.requested) j["requested"] = *v.requested;
}

void from_json(const Json& j, FeatureChange& v) {
    j.at("name").get_to(v.name);
    opt(j, "requested_as", v.requested_as);
    if (const auto it = j.find("requested"); it != j.end() && !it->is_null()) v.requested = it->get<bool>();
    j.at("before").get_to(v.before);
    j.at("after").get_to(v.after);
    j.at("outcome").get_to(v.outcome);
}

void to_json(Json& j, const MtuChange& v) {
    j = Json{{"requested", v.requested}, {"before", v.before}, {"after", v.after}, {"outcome", v.outcome}};
}

void from_json(const Json& j, MtuChange& v) {
    req(j, "requested", v.requested);
    req(j, "before", v.before);
    req(j, "after", v.after);
    j.at("outcome").get_to(v.outcome);
}

void to_json(Json& j, const LinkSettle& v) {
    j = Json{{"link_down_s", v.link_down_s}, {"carrier_drops", v.carrier_drops}, {"wait_s", v.wait_s}, {"back", v.back}};
    if (!v.state.empty()) j["state"] = v.state;
}

void from_json(const Json& j, LinkSettle& v) {
    j.at("link_down_s").get_to(v.link_down_s);
    opt(j, "carrier_drops", v.carrier_drops);
    opt(j, "wait_s", v.wait_s);
    opt(j, "back", v.back);
    opt(j, "state", v.state);
}

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

void to_json(Json& j, const ApplyReport& v) {
    j = Json{{"ifname", v.ifname},   {"netns", v.netns},         {"path", v.path},
             {"features", v.features}, {"mtu", nullptr},         {"active_after", v.active_after},
             {"mtu_after", v.mtu_after}, {"note", v.note},       {"all_requested_hold", v.all_requested_hold()}};
    if (v.mtu) j["mtu"] = *v.mtu;
    if (!v.tuning.empty()) j["tuning"] = v.tuning;
    if (v.link) j["link"] = *v.link;
}

void from_json(const Json& j, ApplyReport& v) {
    j.at("ifname").get_to(v.ifname);
    opt(j, "netns", v.netns);
    opt(j, "path", v.path);
    opt(j, "features", v.features);
    if (const auto it = j.find("mtu"); it != j.end() && !it->is_null()) v.mtu = it->get<MtuChange>();
    opt(j, "active_after", v.active_after);
    opt(j, "mtu_after", v.mtu_after);
    opt(j, "tuning", v.tuning);
    opt(j, "note", v.note);
    if (const auto it = j.find("link"); it != j.end() && !it->is_null()) v.link = it->get<LinkSettle>();
}

}  // namespace nm

#include "core/base/error.hpp"
#include "core/base/device_codec.hpp"
#include "core/base/journal_codec.hpp"
#include "core/base/json_optional_field.hpp"

namespace nm {

using codec::opt;

namespace {

constexpr std::pair<JournalAction, const char*> kActions[] = {
    {JournalAction::Restored, "restored"}, {JournalAction::LeftAlone, "left_alone"}, {JournalAction::Kept, "kept"},
    {JournalAction::Dropped, "dropped"},   {JournalAction::Forgotten, "forgotten"},
};

}  // namespace

void to_json(Json& j, const JournalOwner& v) {
    j = Json{{"pid", v.pid}, {"start_time", v.start_time}, {"boot_id", v.boot_id}, {"command", v.command}};
}

void from_json(const Json& j, JournalOwner& v) {
    opt(j, "pid", v.pid);
    opt(j, "start_time", v.start_time);
    opt(j, "boot_id", v.boot_id);
    opt(j, "command", v.command);
}

void to_json(Json& j, const SettingWrite& v) {
    j = Json{{"before", v.before}};
    if (v.written) j["written"] = *v.written;
    if (v.writing) j["writing"] = *v.writing;
}

void from_json(const Json& j, SettingWrite& v) {
    j.at("before").get_to(v.before);
    if (const auto it = j.find("written"); it != j.end() && !it->is_null()) v.written = it->get<std::string>();
    if (const auto it = j.find("writing"); it != j.end() && !it->is_null()) v.writing = it->get<std::string>();
}

void to_json(Json& j, const JournalEntry& v) {
    j = Json{{"owner", v.owner}, {"where", v.where}, {"scope", v.scope == JournalScope::Netns ? "netns" : "interface"}, {"original", v.original}, {"writes", v.writes}};
    if (v.legacy) j["legacy"] = true;   // an entry read from a v2 file, kept: it still has no writes
}

void from_json(const Json& j, JournalEntry& v) {
    opt(j, "owner", v.owner);
    opt(j, "where", v.where);
    j.at("original").get_to(v.original);
    const std::string scope = j.value("scope", "interface");
    if (scope != "interface" && scope != "netns") throw usage_error("scope: expected interface or netns, got \"" + scope + "\"");
    v.scope = scope == "netns" ? JournalScope::Netns : JournalScope::Interface;
    opt(j, "writes", v.writes);
    opt(j, "legacy", v.legacy);
}

void to_json(Json& j, const JournalAction& v) {
    for (const auto& [a, word] : kActions) {
        if (a == v) j = word;
    }
}

void from_json(const Json& j, JournalAction& v) {
    const auto s = j.get<std::string>();
    for (const auto& [a, word] : kActions) {
        if (s == word) {
            v = a;
            return;
        }
    }
    throw usage_error("action: expected restored, left_alone, kept, dropped or forgotten, got \"" + s + "\"");
}

void to_json(Json& j, const JournalReport& v) {
    j = Json{{"action", v.action}, {"ifname", v.ifname}, {"where", v.where}, {"owner", v.owner},
             {"note", v.note},     {"applied", nullptr}};
    if (v.applied) j["applied"] = *v.applied;
}

void from_json(const Json& j, JournalReport& v) {
    j.at("action").get_to(v.action);
    j.at("ifname").get_to(v.ifname);
    opt(j, "where", v.where);
    opt(j, "owner", v.owner);
    opt(j, "note", v.note);
    if (const auto it = j.find("applied"); it != j.end() && !it->is_null()) v.applied = it->get<ApplyReport>();
}

}  // namespace nm

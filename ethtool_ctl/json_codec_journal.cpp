// JSON of the restore journal beyond the field lists (journal_types.hpp): an entry's scope and legacy mark,
// and a restore's action as a word.
#include "core/base/error.hpp"
#include "core/base/json_optional_field.hpp"
#include "core/base/json_words.hpp"
#include "core/device/device_codec.hpp"
#include "ethtool_ctl/journal_codec.hpp"

namespace nm {

using codec::opt;

namespace {

constexpr std::pair<JournalAction, const char*> kActions[] = {
    {JournalAction::Restored, "restored"}, {JournalAction::LeftAlone, "left_alone"}, {JournalAction::Kept, "kept"},
    {JournalAction::Dropped, "dropped"},   {JournalAction::Forgotten, "forgotten"},
};

}  // namespace

// The listed fields (journal_types.hpp), the scope as a word, and "legacy" only when true.
void to_json(Json& j, const JournalEntry& v) {
    write_fields(j, v, json_fields_and_more(&v));
    j["scope"] = v.scope == JournalScope::Netns ? "netns" : "interface";
    if (v.legacy) j["legacy"] = true;  // an entry read from a v2 file, kept: it still has no writes
}

void from_json(const Json& j, JournalEntry& v) {
    read_fields(j, v, json_fields_and_more(&v));
    const std::string scope = j.value("scope", "interface");
    if (scope != "interface" && scope != "netns") throw usage_error("scope: expected interface or netns, got \"" + scope + "\"");
    v.scope = scope == "netns" ? JournalScope::Netns : JournalScope::Interface;
    opt(j, "legacy", v.legacy);
}

void to_json(Json& j, const JournalAction& v) { word_to_json(j, v, kActions); }
void from_json(const Json& j, JournalAction& v) { word_from_json(j, v, kActions, "action"); }

}  // namespace nm

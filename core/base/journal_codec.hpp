#pragma once
// JSON of the restore journal (json_codec_journal.cpp): an entry is {"owner", "where", "scope", "original": LinkState,
// "writes": {key: {"before", "written", "writing"}}}; actions are the words "restored", "left_alone", "kept",
// "dropped", "forgotten".
// One to_json/from_json pair per value type, found by nlohmann::json through ADL.
#include "core/base/device_codec.hpp"
#include "core/base/journal_types.hpp"
#include "core/base/json.hpp"

namespace nm {

void to_json(Json& j, const SettingWrite& v);
void from_json(const Json& j, SettingWrite& v);
void to_json(Json& j, const JournalOwner& v);
void from_json(const Json& j, JournalOwner& v);
void to_json(Json& j, const JournalEntry& v);
void from_json(const Json& j, JournalEntry& v);
void to_json(Json& j, const JournalAction& v);
void from_json(const Json& j, JournalAction& v);
void to_json(Json& j, const JournalReport& v);
void from_json(const Json& j, JournalReport& v);

}  // namespace nm

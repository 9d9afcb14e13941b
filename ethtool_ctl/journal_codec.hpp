#pragma once
// JSON of the restore journal (json_codec_journal.cpp): an entry is {"owner", "where", "scope", "original": LinkState,
// "writes": {key: {"before", "written", "writing"}}}; actions are the words "restored", "left_alone", "kept",
// "dropped", "forgotten".
// Owners, writes and reports are their field lists' (journal_types.hpp); declared here are the hand-written pairs.
#include "core/base/field_json.hpp"
#include "core/device/device_codec.hpp"
#include "ethtool_ctl/journal_types.hpp"

namespace nm {

NM_JSON_CODEC(JournalEntry);
NM_JSON_CODEC(JournalAction);

}  // namespace nm

#pragma once
// JSON of kernel profiles and their category table (json_codec_profile.cpp). A profile is read tolerantly; the
// table (configs/profile-categories.json) strictly: parse_category_table throws nm::Error (Usage) starting
// with the JSON pointer of the bad value (`/rules/3/category: expected one of ...`). to_json(CategoryTable)
// writes the file's form without its source.
// A profile's per-CPU and per-task parts are their field lists' (cpu_profile.hpp); declared here are the
// hand-written pairs.
#include "core/base/field_json.hpp"
#include "core/profile/cpu_profile.hpp"

namespace nm {

NM_JSON_CODEC(CpuProfile);
void to_json(Json& j, const CategoryTable& v);
CategoryTable parse_category_table(const Json& j);

}  // namespace nm

#pragma once
// JSON of kernel profiles and their category table (json_codec_profile.cpp). A profile is read tolerantly; the
// table (configs/profile-categories.json) strictly: parse_category_table throws nm::Error (Usage) starting
// with the JSON pointer of the bad value (`/rules/3/category: expected one of ...`). to_json(CategoryTable)
// writes the file's form without its source.
// One to_json/from_json pair per value type, found by nlohmann::json through ADL.
#include "core/base/cpu_profile.hpp"
#include "core/base/json.hpp"

namespace nm {

void to_json(Json& j, const CpuProfile& v);
void from_json(const Json& j, CpuProfile& v);
void to_json(Json& j, const CategoryTable& v);
CategoryTable parse_category_table(const Json& j);

}  // namespace nm

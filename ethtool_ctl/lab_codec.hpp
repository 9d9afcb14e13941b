#pragma once
// JSON of the built-in lab's description (json_codec_lab.cpp).
// The lab, its interfaces and VM are their field lists' (lab_types.hpp); the topology is a word.
#include "core/base/field_json.hpp"
#include "ethtool_ctl/lab_types.hpp"

namespace nm {

NM_JSON_CODEC(LabTopology);

}  // namespace nm

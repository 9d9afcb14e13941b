#pragma once
// The JSON Schema keywords generated from the sweep config's field tables (sweep_config_fields.hpp),
// printed by `nicmatrix schema sweep` and spliced into configs/sweep.schema.json by
// scripts/update_schemas.py (tests/python/test_schemas.py checks the committed file holds them).
#include <nlohmann/json.hpp>

namespace nm {

/// One entry per record: {"config": ..., "precision": ..., "interference": ...}, each
/// {"keys": [every key the parser allows, in order], "required": [...], "properties": {key: {type,
/// minimum or exclusiveMinimum, maximum, default, description}}} for the keys that are one member. The
/// committed schema writes the other keys (lists, objects, names, enums) by hand.
nlohmann::json sweep_config_schema();

}  // namespace nm

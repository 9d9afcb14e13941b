#pragma once
// The $defs of results/results.schema.json that are generated from the field lists of the records a
// results file carries (core/base/field_schema.hpp), printed by `nicmatrix schema results` and spliced into
// the committed schema by scripts/update_schemas.py (tests/python/test_schemas.py checks it holds them).
#include "core/base/json.hpp"

namespace nm {

/// {"$defs": {name: schema}}: one def per record in results_schema.cpp's list.
Json results_schema_defs();

}  // namespace nm

#pragma once
// JSON Schema fragments generated from the test spec's field table (test_spec_fields.hpp), printed by
// `nicmatrix schema spec|traffic` and spliced into the committed schemas by scripts/update_schemas.py
// (tests/python/test_schemas.py checks the committed files hold them).
#include <nlohmann/json.hpp>

namespace nm {

/// A TestSpec as results files write it (a run's "spec"): $defs/spec of configs/sweep.schema.json (results.schema.json refers to it).
nlohmann::json test_spec_schema();

/// A sweep's traffic entry as the table gives it: {"test_fields": {key: {type, minimum, maximum, default}},
/// "stream": [keys of a stream entry], "rr": [keys of a request/response entry]}. The committed
/// configs/sweep.schema.json adds descriptions, patterns and the keys coded by hand.
nlohmann::json traffic_entry_schema();

}  // namespace nm

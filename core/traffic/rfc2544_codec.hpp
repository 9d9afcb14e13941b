#pragma once
// JSON of frame-size tables: the spec as `run --json` and results files keep it (frames
// as strings), trials, rows, the table. Readers are tolerant: missing keys keep their defaults.
// Every one of them is its field list's (rfc2544_types.hpp, field_json.hpp): this header only gathers what
// converting them needs (a FrameRow's run is a RunResult).
#include "core/base/field_json.hpp"
#include "core/traffic/rfc2544_types.hpp"
#include "core/traffic/traffic_codec.hpp"

#pragma once
// Log lines of the agent and its server that may carry a client's bytes (L5): a client must not be able
// to forge a line ("restored eth1 after ... left") or flood the log.
#include <cstddef>
#include <string>
#include <string_view>

#include "core/base/json.hpp"

namespace nm {

/// The longest log line written, in characters (longer ones are cut and end in "...").
inline constexpr size_t kMaxLogLine = 512;

/// `line` made safe for a line-oriented log: every control character (newline included), DEL and byte
/// outside printable ASCII written as \xNN, and cut to kMaxLogLine characters.
std::string safe_log_line(std::string_view line);

/// A value a client sent, for a message about it: JSON with every non-ASCII character escaped, cut to 80
/// characters ("\"lo\"", "1.5", "{\"x\":...").
std::string quoted_value(const Json& value);

}  // namespace nm

#pragma once
// DSCP code points (RFC 2474, 2597, 3246) by name and number: the one table `--dscp` and a sweep's
// "dscp" read. The TOS byte a socket carries is dscp << 2 (the low two bits are ECN's).
#include <optional>
#include <string>

namespace nm {

/// "EF" -> 46, "af41" -> 34, "cs1" -> 8, "46" -> 46, "0x2e" -> 46. Names are case-insensitive. Throws
/// nm::Error (Usage) "<field>: ..." naming the names and the range 0..63 otherwise.
int parse_dscp(const std::string& text, const std::string& field);

/// The name of a code point ("EF"), or nullopt for one without a name.
std::optional<std::string> dscp_name(int dscp);

}  // namespace nm

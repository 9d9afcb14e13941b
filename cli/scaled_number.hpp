#pragma once
// Numbers typed with a K/M/G suffix ("100M", "64K"), as iperf takes them.
#include <string>

namespace nm::cli {

/// "100M" -> 100e6 (`binary` false: powers of 1000, rates) or 100 * 2^20 (`binary`: powers of 1024, sizes).
/// Throws a usage error naming `flag` for an empty value, a bad number or suffix, a negative or non-finite
/// value, or one that is not finite once scaled.
double parse_scaled(const std::string& text, const std::string& flag, bool binary);

}  // namespace nm::cli

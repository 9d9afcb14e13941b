#pragma once
// Figures as iperf prints them: fixed digits, bytes in powers of 1024, bits/s in powers of 1000, padding.
#include <cstddef>
#include <string>

namespace nm::cli {

/// `v` with `digits` decimals ("%.*f").
std::string fixed(double v, int digits);
/// "1.23 MBytes": 3 significant figures, powers of 1024.
std::string human_bytes(double b);
/// "9.41 Gbits/sec": 3 significant figures, powers of 1000.
std::string human_bits(double bps);
/// `s` right-aligned in `width` columns.
std::string pad(std::string s, size_t width);

}  // namespace nm::cli

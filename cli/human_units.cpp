#include "cli/human_units.hpp"

#include <cstdio>

namespace nm::cli {

std::string fixed(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

std::string human_bytes(double b) {
    const char* units[] = {"Bytes", "KBytes", "MBytes", "GBytes", "TBytes"};
    int u = 0;
    while (b >= 1024 * 0.995 && u < 4) {
        b /= 1024;
        ++u;
    }
    return fixed(b, b < 10 ? 2 : (b < 100 ? 1 : 0)) + " " + units[u];
}

std::string human_bits(double bps) {
    const char* units[] = {"bits/sec", "Kbits/sec", "Mbits/sec", "Gbits/sec", "Tbits/sec"};
    int u = 0;
    while (bps >= 1000 && u < 4) {
        bps /= 1000;
        ++u;
    }
    return fixed(bps, bps < 10 ? 2 : (bps < 100 ? 1 : 0)) + " " + units[u];
}

std::string pad(std::string s, size_t width) {
    if (s.size() < width) s.insert(0, width - s.size(), ' ');
    return s;
}

}  // namespace nm::cli

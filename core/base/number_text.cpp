#include "core/base/number_text.hpp"

#include <cstdio>

namespace nm {

std::string number_text(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

}  // namespace nm

#pragma once
// A number as a person writes it in a message: the shortest of plain and exponent form, no trailing zeros.
#include <string>

namespace nm {

/// `v` as printf's "%g" writes it: 0.2, 10, 1500, 1e+06.
std::string number_text(double v);

}  // namespace nm

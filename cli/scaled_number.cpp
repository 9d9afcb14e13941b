#include "cli/scaled_number.hpp"

#include <cmath>
#include <exception>

#include "core/base/error.hpp"

namespace nm::cli {

double parse_scaled(const std::string& text, const std::string& flag, bool binary) {
    if (text.empty()) throw usage_error(flag + ": empty value");
    size_t used = 0;
    double v = 0;
    try {
        v = std::stod(text, &used);
    } catch (const std::exception&) {
        throw usage_error(flag + ": \"" + text + "\" is not a number");
    }
    const std::string suffix = text.substr(used);
    const double k = binary ? 1024.0 : 1000.0;
    double scale = 1;
    if (suffix == "k" || suffix == "K") scale = k;
    else if (suffix == "m" || suffix == "M") scale = k * k;
    else if (suffix == "g" || suffix == "G") scale = k * k * k;
    else if (!suffix.empty()) throw usage_error(flag + ": \"" + text + "\": unknown suffix (use K, M or G)");
    if (!(v >= 0) || !std::isfinite(v)) throw usage_error(flag + ": \"" + text + "\" must be >= 0");
    // Finite after scaling too: 1e308G is infinity (resolve_spec bounds what is left).
    if (!std::isfinite(v * scale)) throw usage_error(flag + ": \"" + text + "\" is too large");
    return v * scale;
}

}  // namespace nm::cli

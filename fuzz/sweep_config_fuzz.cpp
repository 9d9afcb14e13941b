// Fuzzes the sweep config parser and the expansion into cells. Every failure must be an nm::Error.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/base/error.hpp"
#include "matrix/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const nm::SweepConfig config = nm::parse_sweep_config_text(text, "fuzz.json");
        (void)nm::expand_cells(config);
    } catch (const nm::Error&) {}
    return 0;
}

// Fuzzes what the client of a stock iperf3 far end does with the server's results message, which comes from
// whatever answers on the port: the nesting check and parse, then the reading of its figures for every
// stream layout a test may have. Every failure must be an nm::Error; the sanitizers catch the rest.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/base/error.hpp"
#include "core/iperf3/iperf3_protocol.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        const nm::Json results = nm::iperf3::parse_message(text, "results");
        for (const auto direction : {nm::Direction::Forward, nm::Direction::Reverse, nm::Direction::Bidir}) {
            for (uint32_t streams = 1; streams <= 3; ++streams) {
                nm::TestSpec spec;
                spec.direction = direction;
                spec.streams = streams;
                try {
                    const auto figures = nm::iperf3::parse_server_results(results, spec, {0, 1});
                    (void)nm::Json(figures).dump();
                } catch (const nm::Error&) {}
            }
        }
    } catch (const nm::Error&) {}
    return 0;
}

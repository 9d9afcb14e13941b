// Fuzzes what `nicmatrix report` and `compare` do with a results file someone hands them: the parser, the
// matrix for a throughput, a CPU, a latency and a loss metric, a file compared with itself, and the CPU
// breakdown. Every failure must be an nm::Error.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/base/error.hpp"
#include "matrix/report/frame_table.hpp"
#include "matrix/report/profile_report.hpp"
#include "matrix/report/report.hpp"
#include "matrix/results_store.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const nm::ResultsFile results = nm::parse_results_text(text, "fuzz.json");
        for (const char* metric : {"throughput_bps", "cpu_sender_pct", "rr_p99_us", "loss_pct"}) {
            try {
                (void)nm::render_results(results, metric, nm::TableFormat::Text);
            } catch (const nm::Error&) {}
        }
        try {
            const nm::Comparison self = nm::compare_results(results, results, "throughput_bps", "a", "b");
            (void)nm::render_comparison(self, nm::TableFormat::Markdown);
        } catch (const nm::Error&) {}
        (void)nm::render_cpu_breakdown(results, nm::TableFormat::Csv);
    } catch (const nm::Error&) {}
    return 0;
}

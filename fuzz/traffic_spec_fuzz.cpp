// Fuzzes the traffic server's handling of a test spec from an unauthenticated client: decode it, resolve
// it (the engine's own limits) and plan both ends. Every failure must be an nm::Error or a JSON
// exception; the sanitizers catch overflowing rate and size arithmetic.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/base/error.hpp"
#include "core/session/traffic_session.hpp"
#include "core/traffic/traffic_codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    const unsigned cores = 1U + data[0] % 64U;  // the server's core count
    const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
    try {
        const nm::Json j = nm::Json::parse(text.begin(), text.end());
        const nm::TestSpec resolved = nm::resolve_spec(j.get<nm::TestSpec>(), cores);
        (void)nm::plan_for(resolved, nm::Direction::Forward, "");
        (void)nm::plan_for(resolved, nm::Direction::Reverse, "");
    } catch (const nm::Error&) {
    } catch (const nlohmann::json::exception&) {}
    return 0;
}

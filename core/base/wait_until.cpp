#include "core/base/wait_until.hpp"

#include <algorithm>
#include <thread>

#include "core/base/error.hpp"

namespace nm {

void wait_until(const std::function<bool()>& predicate, std::chrono::milliseconds timeout, const std::string& what) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    auto interval = std::chrono::milliseconds(1);
    while (!predicate()) {
        if (std::chrono::steady_clock::now() >= deadline) {
            throw Error(ErrorKind::Failed, "timed out after " + std::to_string(timeout.count()) + " ms waiting for " + what);
        }
        std::this_thread::sleep_for(interval);
        interval = std::min(interval * 2, std::chrono::milliseconds(50));
    }
}

}  // namespace nm

#pragma once
// An exception that leaves a thread's entry function calls std::terminate: nothing unwinds anywhere, so
// no destructor restores an interface. Every thread body goes through guarded() so that cannot happen.
#include <exception>
#include <string>
#include <utility>

namespace nm {

/// Runs `body()`; any exception it throws is caught and its text ("unknown exception" for one that is
/// not a std::exception) handed to `on_error(const std::string&)`, which must not throw itself.
template <typename Body, typename OnError>
void guarded(Body&& body, OnError&& on_error) noexcept {
    try {
        std::forward<Body>(body)();
    } catch (const std::exception& e) {
        try {
            on_error(std::string(e.what()));
        } catch (...) {  // NOLINT(bugprone-empty-catch): nothing is left to tell
        }
    } catch (...) {
        try {
            on_error(std::string("unknown exception"));
        } catch (...) {  // NOLINT(bugprone-empty-catch): nothing is left to tell
        }
    }
}

}  // namespace nm

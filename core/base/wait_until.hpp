#pragma once
#include <chrono>
#include <functional>
#include <string>

namespace nm {

/// Polls `predicate` until it returns true or `timeout` passes. Throws nm::Error (Failed) naming `what`
/// when time runs out. The poll interval starts at 1 ms and backs off to 50 ms.
void wait_until(const std::function<bool()>& predicate, std::chrono::milliseconds timeout, const std::string& what);

}  // namespace nm

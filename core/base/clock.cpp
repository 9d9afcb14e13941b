#include "core/base/clock.hpp"

#include <thread>

namespace nm {

void SteadyClock::sleep_until(time_point when) { std::this_thread::sleep_until(when); }

}  // namespace nm

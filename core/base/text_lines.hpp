#pragma once
// Line by line through a text read whole (a /proc or /sys file, kallsyms, a kernel config).
#include <cstddef>
#include <string_view>

namespace nm {

/// Calls `f(line)` for every line of `text`, split at '\n' and without it; a last line without a newline
/// is a line too, an empty text has none.
template <typename F>
void for_each_line(std::string_view text, F&& f) {
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        f(text.substr(pos, end - pos));
        pos = end + 1;
    }
}

}  // namespace nm

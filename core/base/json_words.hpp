#pragma once
// An enum written as one of its words (`{SettingOutcome::Applied, "applied"}, ...`) and read back from
// it; a word not in the table is an nm::Error (Usage): "<what>: expected a, b or c, got \"x\"".
#include <cstddef>
#include <string>
#include <utility>

#include "core/base/error.hpp"
#include "core/base/json.hpp"

namespace nm {

template <typename E, size_t N>
void word_to_json(Json& j, E v, const std::pair<E, const char*> (&words)[N]) {
    for (const auto& [value, word] : words) {
        if (value == v) j = word;
    }
}

template <typename E, size_t N>
void word_from_json(const Json& j, E& v, const std::pair<E, const char*> (&words)[N], const char* what) {
    const auto s = j.get<std::string>();
    std::string expected;
    for (size_t i = 0; i < N; ++i) {
        if (s == words[i].second) {
            v = words[i].first;
            return;
        }
        expected += std::string(i == 0 ? "" : i + 1 == N ? " or " : ", ") + words[i].second;
    }
    throw usage_error(std::string(what) + ": expected " + expected + ", got \"" + s + "\"");
}

}  // namespace nm

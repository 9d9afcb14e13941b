#include "core/profile/categories.hpp"

#include <fstream>
#include <sstream>

#include "core/base/error.hpp"
#include "core/base/json_text.hpp"
#include "core/profile/builtin_categories.hpp"
#include "core/profile/profile_codec.hpp"

namespace nm::profile {
namespace {

CategoryTable parse_text(const std::string& text, const std::string& source) {
    const Json j = parse_json_text(text, source);
    try {
        CategoryTable t = parse_category_table(j);
        t.source = source;
        return t;
    } catch (const Error& e) {
        throw usage_error(source + ": " + e.what());
    }
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view text) {
    // Iterative matching with one backtrack point (the last '*'): linear in practice, no recursion.
    size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
    while (t < text.size()) {
        if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
            ++p;
            ++t;
        } else if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            mark = t;
        } else if (star != std::string_view::npos) {
            p = star + 1;
            t = ++mark;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*') ++p;
    return p == pattern.size();
}

CategoryTable builtin_category_table() {
    CategoryTable t = parse_text(std::string(kBuiltinCategories), "built-in configs/profile-categories.json");
    t.source = "built-in";
    return t;
}

CategoryTable load_category_table(const std::string& path) {
    if (path.empty()) return builtin_category_table();
    std::ifstream in(path);
    if (!in) throw usage_error("--profile-categories " + path + ": cannot be read");
    std::ostringstream text;
    text << in.rdbuf();
    return parse_text(text.str(), path);
}

const std::string* CategoryMatcher::kernel_category(const std::string& symbol) {
    if (const auto it = cache_.find(symbol); it != cache_.end()) return it->second;
    const std::string* found = nullptr;
    for (const auto& rule : table_.rules) {
        for (const auto& p : rule.patterns) {
            if (glob_match(p, symbol)) {
                found = &rule.category;
                break;
            }
        }
        if (found != nullptr) break;
    }
    cache_.emplace(symbol, found);
    return found;
}

}  // namespace nm::profile

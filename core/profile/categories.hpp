#pragma once
// Sorting symbols into categories by the table of configs/profile-categories.json (the shipped table is
// built into the program from that file; --profile-categories replaces it).
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/profile/cpu_profile.hpp"

namespace nm::profile {

/// True when the glob `pattern` matches all of `text`: `*` matches any run of characters (none too), `?`
/// any one character, every other character itself.
bool glob_match(std::string_view pattern, std::string_view text);

/// The table shipped with nicmatrix (configs/profile-categories.json, built in); source "built-in".
CategoryTable builtin_category_table();

/// The table in `path`, or the built-in one for "". Throws nm::Error (Usage) naming the file and, for a
/// bad value, its JSON pointer: "t.json: /rules/2/category: expected one of the listed categories ...".
CategoryTable load_category_table(const std::string& path);

/// The category of kernel symbols, by the table's first matching rule; remembers every answer (a profile
/// has thousands of samples of a few hundred symbols).
class CategoryMatcher {
public:
    explicit CategoryMatcher(const CategoryTable& table) : table_(table) {}

    /// The matching rule's category, or nullptr when no rule matches.
    const std::string* kernel_category(const std::string& symbol);

private:
    const CategoryTable& table_;
    std::unordered_map<std::string, const std::string*> cache_;
};

}  // namespace nm::profile

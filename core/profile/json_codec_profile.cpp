// JSON of kernel profiles and of the category table. A profile is written by nicmatrix and read back
// tolerantly (keys added later get defaults). The category table is a file people edit, so it is read
// strictly: every error names the JSON pointer of the offending value and what was expected, and unknown
// keys are errors (a misspelt "rules" must not silently leave every symbol in "other").
#include <algorithm>
#include <cctype>
#include <set>

#include "core/base/error.hpp"
#include "core/base/json_optional_field.hpp"
#include "core/profile/profile_codec.hpp"

namespace nm {

using codec::opt;

namespace {

[[noreturn]] void fail(const std::string& pointer, const std::string& message) { throw usage_error(pointer + ": " + message); }

std::string shown(const Json& j) { return j.is_object() ? "an object" : j.is_array() ? "an array" : j.dump(); }

// A category name: it becomes part of metric names (cpu:copy) and DataFrame columns (cpu_copy_pct).
bool valid_category(const std::string& s) {
    return !s.empty() && s.size() <= 32 && std::all_of(s.begin(), s.end(), [](char c) {
        return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_';
    });
}

constexpr size_t kMaxPattern = 256;

Json symbols_json(const std::vector<ProfileSymbol>& v, bool with_category) {
    Json out = Json::array();
    for (const auto& s : v) {
        Json e{{"symbol", s.symbol}, {"pct", s.pct}};
        if (with_category) e["category"] = s.category;
        out.push_back(std::move(e));
    }
    return out;
}

std::vector<ProfileSymbol> symbols_from(const Json& j) {
    std::vector<ProfileSymbol> out;
    if (!j.is_array()) return out;
    for (const auto& e : j) {
        ProfileSymbol s;
        opt(e, "symbol", s.symbol);
        opt(e, "pct", s.pct);
        opt(e, "category", s.category);
        out.push_back(std::move(s));
    }
    return out;
}

}  // namespace

// The listed fields (cpu_profile.hpp) and the symbol lists: "top" with each symbol's category,
// "unmatched" without (every one is "other").
void to_json(Json& j, const CpuProfile& v) {
    write_fields(j, v, json_fields_and_more(&v));
    j["top"] = symbols_json(v.top, true);
    j["unmatched"] = symbols_json(v.unmatched, false);
}

void from_json(const Json& j, CpuProfile& v) {
    read_fields(j, v, json_fields_and_more(&v));
    v.top = symbols_from(j.value("top", Json::array()));
    v.unmatched = symbols_from(j.value("unmatched", Json::array()));
    for (auto& s : v.unmatched) s.category = "other";
}

void to_json(Json& j, const CategoryTable& v) {
    Json rules = Json::array();
    for (const auto& r : v.rules) rules.push_back({{"category", r.category}, {"match", r.patterns}});
    j = Json{{"categories", v.categories}, {"rules", rules}};
}

CategoryTable parse_category_table(const Json& j) {
    if (!j.is_object()) fail("/", "expected a category table {\"categories\": [...], \"rules\": [...]}, got " + shown(j));
    for (const auto& [key, value] : j.items()) {
        if (key != "categories" && key != "rules" && key != "description" && key != "$comment") {
            fail("/" + key, "unknown key; expected one of \"description\", \"categories\", \"rules\"");
        }
    }
    CategoryTable t;
    if (j.contains("description") && !j.at("description").is_string()) fail("/description", "expected a string");
    if (!j.contains("categories")) fail("/categories", "missing; expected an array of category names");
    const auto& names = j.at("categories");
    if (!names.is_array() || names.empty()) fail("/categories", "expected a non-empty array of category names, got " + shown(names));
    std::set<std::string> known;
    for (size_t i = 0; i < names.size(); ++i) {
        const std::string where = "/categories/" + std::to_string(i);
        const auto& n = names[i];
        if (!n.is_string() || !valid_category(n.get<std::string>())) {
            fail(where, "expected a category name of lower-case letters, digits and '_' (at most 32), got " + shown(n));
        }
        if (!known.insert(n.get<std::string>()).second) fail(where, "\"" + n.get<std::string>() + "\" is listed twice");
        t.categories.push_back(n.get<std::string>());
    }
    for (const char* needed : {"user", "idle", "other"}) {
        if (!known.count(needed)) {
            fail("/categories", std::string("must list \"") + needed +
                                    "\" (user: samples in user space; idle: the idle task; other: kernel symbols no rule matches)");
        }
    }
    if (!j.contains("rules")) fail("/rules", "missing; expected an array of {\"category\": ..., \"match\": [...]}");
    const auto& rules = j.at("rules");
    if (!rules.is_array()) fail("/rules", "expected an array of {\"category\": ..., \"match\": [...]}, got " + shown(rules));
    for (size_t i = 0; i < rules.size(); ++i) {
        const std::string where = "/rules/" + std::to_string(i);
        const auto& r = rules[i];
        if (!r.is_object()) fail(where, "expected a rule {\"category\": ..., \"match\": [...]}, got " + shown(r));
        for (const auto& [key, value] : r.items()) {
            if (key != "category" && key != "match" && key != "$comment") fail(where + "/" + key, "unknown key; expected \"category\" or \"match\"");
        }
        CategoryRule rule;
        if (!r.contains("category")) fail(where + "/category", "missing; expected one of the listed categories");
        const auto& c = r.at("category");
        if (!c.is_string() || !known.count(c.get<std::string>())) {
            std::string list;
            for (const auto& n : t.categories) list += (list.empty() ? "\"" : ", \"") + n + "\"";
            fail(where + "/category", "expected one of the listed categories (" + list + "), got " + shown(c));
        }
        rule.category = c.get<std::string>();
        if (rule.category == "user") {
            fail(where + "/category", "\"user\" is every sample taken in user space; a rule cannot give it to a kernel symbol");
        }
        if (!r.contains("match")) fail(where + "/match", "missing; expected a pattern or an array of patterns");
        const auto& m = r.at("match");
        const auto add = [&](const Json& p, const std::string& at) {
            if (!p.is_string() || p.get<std::string>().empty() || p.get<std::string>().size() > kMaxPattern) {
                fail(at, "expected a non-empty symbol pattern (at most 256 characters; * and ? are wildcards), got " + shown(p));
            }
            rule.patterns.push_back(p.get<std::string>());
        };
        if (m.is_array()) {
            if (m.empty()) fail(where + "/match", "expected at least one pattern");
            for (size_t k = 0; k < m.size(); ++k) add(m[k], where + "/match/" + std::to_string(k));
        } else {
            add(m, where + "/match");
        }
        t.rules.push_back(std::move(rule));
    }
    return t;
}

}  // namespace nm

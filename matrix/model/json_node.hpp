#pragma once
// The reader of a file people write by hand (a sweep config): a JSON value together with its JSON pointer,
// so every error says where (`/traffic/1/streams`), what was expected and what was found. Used by the
// sweep and results codecs (sweep_config_codec.cpp and the files beside it); every error is an
// nm::Error (Usage) starting with the pointer.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/base/error.hpp"
#include "core/base/json.hpp"

namespace nm::sweep_json {

inline std::string describe(const Json& j) {
    switch (j.type()) {
        case Json::value_t::object: return "an object";
        case Json::value_t::array: return "an array";
        case Json::value_t::null: return "null";
        case Json::value_t::discarded: return "nothing";
        default: return j.dump();
    }
}

inline std::string join_quoted(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "\"" : ", \"") + n + "\"";
    return out;
}

// A value in the config together with its JSON pointer, so every error can say where it is.
class Node {
public:
    Node(const Json& j, std::string pointer) : j_(j), pointer_(std::move(pointer)) {}

    const Json& json() const { return j_; }
    const std::string& pointer() const { return pointer_; }

    [[noreturn]] void fail(const std::string& expected) const {
        throw usage_error((pointer_.empty() ? "/" : pointer_) + ": expected " + expected + ", got " + describe(j_));
    }
    [[noreturn]] void fail_message(const std::string& message) const { throw usage_error((pointer_.empty() ? "/" : pointer_) + ": " + message); }

    // An object whose keys must all be in `allowed`.
    void expect_object(const std::vector<std::string>& allowed, const std::string& what) const {
        if (!j_.is_object()) fail(what);
        for (const auto& [key, value] : j_.items()) {
            if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
                child(key).fail_message("unknown key; expected one of " + join_quoted(allowed));
            }
        }
    }
    bool has(const std::string& key) const { return j_.contains(key); }
    Node child(const std::string& key) const { return Node(j_.at(key), pointer_ + "/" + escape(key)); }
    Node child(size_t index) const { return Node(j_.at(index), pointer_ + "/" + std::to_string(index)); }
    Node required(const std::string& key, const std::string& expected) const {
        if (!j_.contains(key)) {
            throw usage_error(pointer_ + "/" + escape(key) + ": missing; expected " + expected);
        }
        return child(key);
    }

    std::vector<Node> array(const std::string& expected, bool non_empty) const {
        if (!j_.is_array() || (non_empty && j_.empty())) fail(expected);
        std::vector<Node> out;
        for (size_t i = 0; i < j_.size(); ++i) out.push_back(child(i));
        return out;
    }

    std::string string(const std::string& expected = "a string") const {
        if (!j_.is_string()) fail(expected);
        return j_.get<std::string>();
    }

    // A name that can be part of a cell key: letters, digits, '.', '_', '-', '+', '='.
    std::string name() const {
        const std::string expected = "a non-empty name of letters, digits, '.', '_', '-', '+', '='";
        auto s = string(expected);
        const bool ok = !s.empty() && s.size() <= 64 && std::all_of(s.begin(), s.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '+' || c == '=';
        });
        if (!ok) fail(expected);
        return s;
    }

    // Integers are read exactly: a JSON integer as itself, a whole float (people write 1e9) only when it
    // is below 2^64, so the conversion is defined; the range check is on the integer, not on a double.
    uint64_t integer(uint64_t min, uint64_t max, const std::string& expected) const {
        uint64_t v = 0;
        if (j_.is_number_unsigned()) {
            v = j_.get<uint64_t>();
        } else if (j_.is_number_float()) {
            const double d = j_.get<double>();
            if (!(d >= 0) || d >= 18446744073709551616.0 || std::floor(d) != d) fail(expected);
            v = static_cast<uint64_t>(d);
        } else {
            fail(expected);  // a negative integer, a string, ...
        }
        if (v < min || v > max) fail(expected);
        return v;
    }

    double number(double min, double max, bool min_exclusive, const std::string& expected) const {
        if (!j_.is_number()) fail(expected);
        const double d = j_.get<double>();
        if (!std::isfinite(d) || d < min || (min_exclusive && d == min) || d > max) fail(expected);
        return d;
    }

    bool boolean() const {
        if (!j_.is_boolean()) fail("true or false");
        return j_.get<bool>();
    }

    // "on"/"off" as ethtool -K takes them, or a JSON boolean.
    bool on_off() const {
        if (j_.is_boolean()) return j_.get<bool>();
        if (j_.is_string() && j_ == "on") return true;
        if (j_.is_string() && j_ == "off") return false;
        fail("\"on\", \"off\", true or false");
    }

private:
    static std::string escape(const std::string& key) {
        std::string out;
        for (char c : key) {
            if (c == '~') out += "~0";
            else if (c == '/') out += "~1";
            else out += c;
        }
        return out;
    }

    const Json& j_;
    std::string pointer_;
};

// Enums as the words of a table {value, word}: reading one names the words it takes.
template <typename E, size_t N>
std::vector<std::string> enum_names(const std::pair<E, const char*> (&names)[N]) {
    std::vector<std::string> out;
    for (const auto& [value, name] : names) out.emplace_back(name);
    return out;
}

template <typename E, size_t N>
E enum_value(const Node& n, const std::pair<E, const char*> (&names)[N]) {
    const std::string expected = "one of " + join_quoted(enum_names(names));
    const auto s = n.string(expected);
    for (const auto& [value, name] : names) {
        if (s == name) return value;
    }
    n.fail(expected);
}

template <typename E, size_t N>
const char* enum_name(E v, const std::pair<E, const char*> (&names)[N]) {
    for (const auto& [value, name] : names) {
        if (value == v) return name;
    }
    return "unknown";
}

}  // namespace nm::sweep_json

#pragma once
// `nicmatrix run`'s flags of the test spec's fields, made from the field table (core/traffic/test_spec_fields.hpp):
// each row with a flag becomes one CLI11 option bound to its member of a TestSpec, in the table's order.
// A field added to the table with a cli_flag(...) is a flag of `run`, in --help and (through
// `nicmatrix schema flags`) on its man page, with nothing written here.
#include <CLI/CLI.hpp>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/traffic/traffic_types.hpp"

namespace nm::cli {

/// The table's flags on one command.
class TestSpecFlags {
public:
    /// Flags written by hand, added just before the flag of the field they are keyed by (their place in --help).
    using HandFlags = std::map<std::string, std::function<void()>, std::less<>>;

    /// Adds every flag of the table to `cmd`, bound to `spec`'s members (both must outlive the parse; this
    /// object keeps the text of the flags with suffixes). Throws std::logic_error for a `before` key that
    /// is not a field of the table.
    TestSpecFlags(CLI::App& cmd, TestSpec& spec, const HandFlags& before = {});
    TestSpecFlags(const TestSpecFlags&) = delete;
    TestSpecFlags& operator=(const TestSpecFlags&) = delete;

    /// The option of field `key` (nullptr: the field has no flag).
    CLI::Option* option(std::string_view key) const;
    /// Whether field `key`'s flag was given (one with suffixes: given a value other than "").
    bool given(std::string_view key) const;
    /// Writes the values given with K/M/G suffixes (sizes, rates) into `spec`, in the table's order.
    /// Throws a usage error naming the flag (a bad number or suffix, too large for the field, 0 where refused).
    void apply_scaled(TestSpec& spec) const;

private:
    std::map<std::string, CLI::Option*, std::less<>> options_;
    std::map<std::string, std::string, std::less<>> texts_;  // key -> text as typed (kFlagScaled)
};

/// The table's flags as `nicmatrix schema flags` prints them, for man/render.py and the tests:
/// {"run": [{"key", "flags": ["-P", "--parallel"], "value", "unit", "help"}, ...]} in the table's order.
nlohmann::json test_spec_flags_json();

}  // namespace nm::cli

#pragma once
// The machinery of the test spec's field table (NM_TEST_SPEC_FIELDS in traffic_types.hpp, next to TestSpec):
// every user-settable field of TestSpec (and of its TestTarget) with its JSON key, member, range, whether a
// sweep's traffic entry takes it, its DataFrame column, its unit, its help and its flag of `nicmatrix run`,
// declared once. Derived from it: the TestSpec JSON codec (json_codec_traffic.cpp), the keys, range checks
// and written fields of a sweep's traffic entry (matrix/model/traffic_entry_codec.cpp), the generated JSON Schema of both
// (`nicmatrix schema spec`, core/traffic/test_spec_schema.cpp), Python's run() keywords and setting columns
// (the bindings' test_spec_fields()), `nicmatrix run`'s flags (cli/test_spec_flags.cpp) and their lines
// of the man page (`nicmatrix schema flags`, which man/render.py reads when it renders nicmatrix-run(1)).
//
// Adding a field: its member and one X(...) line in traffic_types.hpp, the code that uses it, one test (and
// scripts/update_schemas.py regenerates the committed schemas). Fields whose JSON is not one
// member (the pattern's "test" and "connect_per_transaction", "dscp" with its names and null, "affinity",
// "payload_mix") are coded by hand and named in NM_TEST_SPEC_HAND_KEYS.
#include <cstdint>
#include <string>
#include <type_traits>

#include "core/traffic/traffic_types.hpp"

namespace nm {

// The table itself, NM_TEST_SPEC_FIELDS, is in traffic_types.hpp next to TestSpec: a field's member and
// its row in one place.

/// TestSpec's JSON keys coded by hand (json_codec_traffic.cpp, matrix/model/traffic_entry_codec.cpp), not in the table.
#define NM_TEST_SPEC_HAND_KEYS "test", "connect_per_transaction", "dscp", "affinity", "payload_mix"

/// A field's flag of `nicmatrix run` (CLI11 names, the man page's placeholder, --help's text), as the table's
/// `flag` column gives it: cli_flag(...) or kNoFlag.
struct CliFlag {
    const char* names = "";  ///< CLI11's "-P,--parallel"; "" = no flag from the table (by hand, or none)
    const char* value = "";  ///< the man page's placeholder of the value (N, SIZE, S, FILE, IFACE, HOST, ...); "" = a switch
    const char* help = "";   ///< the text --help shows
    unsigned options = 0;    ///< kFlag* below
    const char* needs = "";  ///< the key of the field whose flag must be given with this one; "" = none
};

inline constexpr unsigned kFlagRequired = 1;     ///< the flag must be given
inline constexpr unsigned kFlagShowDefault = 2;  ///< --help shows the default ("[10]")
/// The value is text with K/M/G suffixes: powers of 1024 for FieldUnit::Bytes, of 1000 otherwise. Integers
/// are checked against their type (at most 1e18), the number otherwise only against being finite and >= 0.
inline constexpr unsigned kFlagScaled = 4;
inline constexpr unsigned kFlagPositive = 8;      ///< with kFlagScaled: 0 is refused ("must be > 0")
inline constexpr unsigned kFlagValueAsType = 16;  ///< --help names the value by `value` instead of its type (USEC)

constexpr CliFlag cli_flag(const char* names, const char* value, const char* help, unsigned options = 0, const char* needs = "") {
    return CliFlag{names, value, help, options, needs};
}
inline constexpr CliFlag kNoFlag{};

/// What the table says about one field.
struct TestSpecField {
    const char* key;
    double min;
    double max;
    FieldAxis axis;
    const char* column;
    const char* help;
    FieldUnit unit;
    CliFlag flag;
};

/// The table's rows, in order.
inline constexpr TestSpecField kTestSpecFields[] = {
#define NM_FIELD_ROW(key, member, min, max, axis, column, unit, help, flag) \
    {#key, double(min), double(max), FieldAxis::axis, column, help, FieldUnit::unit, flag},
    NM_TEST_SPEC_FIELDS(NM_FIELD_ROW)
#undef NM_FIELD_ROW
};

/// Calls `f(field, member)` for every field of the table, in order: `spec` const or not.
template <typename Spec, typename F>
void for_each_test_spec_field(Spec& spec, F&& f) {
    size_t row = 0;
#define NM_FIELD_VISIT(key, member, min, max, axis, column, unit, help, flag) f(kTestSpecFields[row++], spec.member);
    NM_TEST_SPEC_FIELDS(NM_FIELD_VISIT)
#undef NM_FIELD_VISIT
}

/// Calls `f(field, a.member, b.member)` for every field of the table, in order: two specs side by side
/// (a spec and the defaults, to write only what is set).
template <typename F>
void for_each_test_spec_field(const TestSpec& a, const TestSpec& b, F&& f) {
    size_t row = 0;
#define NM_FIELD_VISIT2(key, member, min, max, axis, column, unit, help, flag) f(kTestSpecFields[row++], a.member, b.member);
    NM_TEST_SPEC_FIELDS(NM_FIELD_VISIT2)
#undef NM_FIELD_VISIT2
}

}  // namespace nm

#pragma once
// The machinery of the sweep config's field tables (NM_SWEEP_CONFIG_FIELDS, NM_PRECISION_FIELDS,
// NM_INTERFERENCE_FIELDS in sweep_types.hpp, next to their records): every key of the config's top level
// and of its `precision` and `interference` objects, in the order the parser names them, and for each key
// that is one number or switch member its range, unit, help and error wording, declared once. Derived
// from them: the parser's allowed keys, range checks and "expected ..." wording and the writer of those
// members (sweep_config_codec.cpp), and their JSON Schema keywords (`nicmatrix schema sweep`,
// sweep_config_schema.cpp), which scripts/update_schemas.py splices into configs/sweep.schema.json.
//
// Adding a key that is one member: the member (with its default) and one X(...) row in sweep_types.hpp,
// the code that uses it, one test, scripts/update_schemas.py. A key that is not one member (a list, an
// object, a name, an enum) is an H("key") line there, read by hand in sweep_config_codec.cpp.
#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

#include "matrix/model/sweep_types.hpp"

namespace nm {

/// What a sweep config table says about one key that is one member (a row X(...)).
struct SweepConfigField {
    const char* key;
    double min;
    double max;
    unsigned options;  ///< kSweepKeyRequired, kSweepKeyAboveMin
    FieldUnit unit;
    const char* help;
    const char* expected;
};

#define NM_SWEEP_FIELD_ROW(key, member, min, max, options, unit, help, expected) \
    SweepConfigField{#key, double(min), double(max), options, FieldUnit::unit, help, expected},
#define NM_SWEEP_FIELD_KEY(key, ...) #key,
#define NM_SWEEP_HAND_KEY(key) key,
#define NM_SWEEP_NO_ROW(key)
#define NM_SWEEP_FIELD_VISIT(key, member, ...) f(kRows[row++], record.member);

/// The table of a record: SweepFieldTable<SweepConfig>, <PrecisionSpec>, <InterferenceSpec>. `kRows` are its
/// X(...) rows, `kKeys` every key of the record's table in order (rows and hand-coded keys alike).
template <typename Record>
struct SweepFieldTable;

#define NM_SWEEP_FIELD_TABLE(Record, TABLE)                                                       \
    template <>                                                                                   \
    struct SweepFieldTable<Record> {                                                              \
        static constexpr SweepConfigField kRows[] = {TABLE(NM_SWEEP_FIELD_ROW, NM_SWEEP_NO_ROW)}; \
        static constexpr const char* kKeys[] = {TABLE(NM_SWEEP_FIELD_KEY, NM_SWEEP_HAND_KEY)};    \
        template <typename R, typename F>                                                         \
        static void visit(R& record, F&& f) {                                                     \
            size_t row = 0;                                                                       \
            TABLE(NM_SWEEP_FIELD_VISIT, NM_SWEEP_NO_ROW)                                          \
        }                                                                                         \
    };

NM_SWEEP_FIELD_TABLE(SweepConfig, NM_SWEEP_CONFIG_FIELDS)
NM_SWEEP_FIELD_TABLE(PrecisionSpec, NM_PRECISION_FIELDS)
NM_SWEEP_FIELD_TABLE(InterferenceSpec, NM_INTERFERENCE_FIELDS)

#undef NM_SWEEP_FIELD_TABLE
#undef NM_SWEEP_FIELD_VISIT
#undef NM_SWEEP_NO_ROW
#undef NM_SWEEP_HAND_KEY
#undef NM_SWEEP_FIELD_KEY
#undef NM_SWEEP_FIELD_ROW

/// Calls `f(field, member)` for every X(...) row of the record's table, in order: `record` const or not.
template <typename Record, typename F>
void for_each_sweep_field(Record& record, F&& f) {
    SweepFieldTable<std::remove_const_t<Record>>::visit(record, f);
}

/// The keys a record's JSON object may have, in the order an "unknown key" error names them: its table's,
/// and for the config the tuning axes after them.
template <typename Record>
std::vector<std::string> sweep_record_keys() {
    std::vector<std::string> keys(std::begin(SweepFieldTable<Record>::kKeys), std::end(SweepFieldTable<Record>::kKeys));
    if constexpr (std::is_same_v<Record, SweepConfig>) keys.insert(keys.end(), std::begin(kTuningAxes), std::end(kTuningAxes));
    return keys;
}

}  // namespace nm

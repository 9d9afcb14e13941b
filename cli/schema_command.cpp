// `nicmatrix schema spec|traffic|flags|sweep|results`: the JSON Schema fragments generated from the field
// tables (the test spec's, core/traffic/test_spec_fields.hpp; the sweep config's, matrix/model/sweep_config_fields.hpp)
// and from the field lists of the records a results file carries (matrix/model/results_schema.cpp), which
// scripts/update_schemas.py splices into the committed schemas, and the flags of `nicmatrix run` the test
// spec's table declares, which man/render.py puts on run's man page.
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "cli/test_spec_flags.hpp"
#include "core/base/json.hpp"
#include "core/traffic/test_spec_schema.hpp"
#include "matrix/model/results_schema.hpp"
#include "matrix/model/sweep_config_schema.hpp"

namespace nm::cli {

namespace {

Json schema_of(const std::string& which) {
    if (which == "spec") return test_spec_schema();
    if (which == "traffic") return traffic_entry_schema();
    if (which == "sweep") return sweep_config_schema();
    if (which == "results") return results_schema_defs();
    return test_spec_flags_json();
}

}  // namespace

void add_schema_command(CLI::App& app) {
    auto* schema = app.add_subcommand("schema", "Print a JSON Schema fragment generated from the field tables");
    auto which = std::make_shared<std::string>();
    schema
        ->add_option("which", *which,
                     "spec: a run's test spec ($defs/spec of configs/sweep.schema.json, which results.schema.json refers to); traffic: a sweep's "
                     "traffic entry "
                     "fields ($defs/test_fields of configs/sweep.schema.json) and which entries take them; flags: "
                     "the flags of `nicmatrix run` the table declares (for the man page); sweep: the sweep config's "
                     "keys of its top level, precision and interference (configs/sweep.schema.json's properties), "
                     "the keys each allows, and the type, range, default and description of those that are one value; "
                     "results: the $defs of results.schema.json generated from the field lists of the records a "
                     "results file carries")
        ->required()
        ->check(CLI::IsMember({"spec", "traffic", "flags", "sweep", "results"}));
    schema->callback([which] { std::cout << schema_of(*which).dump(2) << "\n"; });
}

}  // namespace nm::cli

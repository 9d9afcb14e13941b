// `nicmatrix schema spec|traffic|flags|results`: the JSON Schema fragments generated from the test spec's field
// table (core/base/test_spec_fields.hpp) and from the field lists of the records a results file carries
// (matrix/model/results_schema.cpp), which scripts/update_schemas.py splices into the committed schemas, and
// the flags of `nicmatrix run` the table declares, which man/render.py puts on run's man page.
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "cli/test_spec_flags.hpp"
#include "core/base/test_spec_schema.hpp"
#include "matrix/model/results_schema.hpp"

namespace nm::cli {

void add_schema_command(CLI::App& app) {
    auto* schema = app.add_subcommand("schema", "Print a JSON Schema fragment generated from the field tables");
    auto which = std::make_shared<std::string>();
    schema
        ->add_option("which", *which,
                     "spec: a run's test spec (results.schema.json's $defs/spec); traffic: a sweep's traffic entry "
                     "fields ($defs/test_fields of configs/sweep.schema.json) and which entries take them; flags: "
                     "the flags of `nicmatrix run` the table declares (for the man page); results: the $defs of "
                     "results.schema.json generated from the field lists of the records a results file carries")
        ->required()
        ->check(CLI::IsMember({"spec", "traffic", "flags", "results"}));
    schema->callback([which] {
        const auto json = *which == "spec"      ? test_spec_schema()
                          : *which == "traffic" ? traffic_entry_schema()
                          : *which == "results" ? results_schema_defs()
                                                : test_spec_flags_json();
        std::cout << json.dump(2) << "\n";
    });
}

}  // namespace nm::cli

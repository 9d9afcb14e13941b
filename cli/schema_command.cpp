// `nicmatrix schema spec|traffic`: the JSON Schema fragments generated from the test spec's field table
// (core/base/test_spec_fields.hpp). scripts/update_schemas.py splices them into the committed schemas.
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "core/base/test_spec_schema.hpp"

namespace nm::cli {

void add_schema_command(CLI::App& app) {
    auto* schema = app.add_subcommand("schema", "Print a JSON Schema fragment generated from the field tables");
    auto which = std::make_shared<std::string>();
    schema->add_option("which", *which,
                       "spec: a run's test spec (results.schema.json's $defs/spec); traffic: a sweep's traffic entry "
                       "fields ($defs/test_fields of configs/sweep.schema.json) and which entries take them")
        ->required()
        ->check(CLI::IsMember({"spec", "traffic"}));
    schema->callback([which] {
        std::cout << (*which == "spec" ? test_spec_schema() : traffic_entry_schema()).dump(2) << "\n";
    });
}

}  // namespace nm::cli

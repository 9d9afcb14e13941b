// The executable is built hardened, as Debian builds its packages: checked with binutils' readelf, not
// with anything of the build's own. `nicmatrix serve` runs as root and reads what any client sends.
#include <catch2/catch.hpp>

#include <string>

#include "tests/support/command.hpp"

using nm::test::nicmatrix_binary;
using nm::test::run_command;

namespace {

// glibc's checked functions the executable imports (__memcpy_chk, __snprintf_chk, ...): "__NAME_chk" in
// the dynamic symbol table, __stack_chk_fail (the canary's) not counted.
int fortified_calls(const std::string& dyn_syms) {
    int n = 0;
    for (size_t at = dyn_syms.find("_chk"); at != std::string::npos; at = dyn_syms.find("_chk", at + 1)) {
        const size_t start = dyn_syms.rfind(' ', at) + 1;
        const std::string name = dyn_syms.substr(start, at + 4 - start);
        if (name.rfind("__", 0) == 0 && name != "__stack_chk") ++n;
    }
    return n;
}

}  // namespace

TEST_CASE("nicmatrix is built hardened: full RELRO, PIE, stack protector and glibc's fortified functions", "[integration]") {
    const std::string bin = nicmatrix_binary();
    const auto dynamic = run_command("readelf -dW " + bin);
    REQUIRE(dynamic.exit_status == 0);
    INFO(dynamic.output);
    // -z now: every symbol bound at start, so the whole GOT can be made read-only (full RELRO).
    CHECK_THAT(dynamic.output, Catch::Contains("BIND_NOW") || Catch::Contains("Flags: NOW"));
    CHECK_THAT(dynamic.output, Catch::Contains("PIE"));
    const auto segments = run_command("readelf -lW " + bin);
    REQUIRE(segments.exit_status == 0);
    CHECK_THAT(segments.output, Catch::Contains("GNU_RELRO"));
    const auto symbols = run_command("readelf --dyn-syms -W " + bin);
    REQUIRE(symbols.exit_status == 0);
    // A canary check is called where a function's stack holds an array; a fortified call where glibc could
    // not prove a copy's size at compile time (there are always some in a program this size).
    CHECK_THAT(symbols.output, Catch::Contains("__stack_chk_fail"));
    CHECK(fortified_calls(symbols.output) > 0);
}

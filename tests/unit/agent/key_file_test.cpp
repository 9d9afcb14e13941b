#include <catch2/catch.hpp>

#include <fstream>

#include "core/base/error.hpp"
#include "agent/key_file.hpp"
#include "tests/support/matrix_world.hpp"

TEST_CASE("Key files: missing and short keys are usage errors naming the file", "[unit]") {
    nm::test::TempDir dir;
    CHECK_THROWS_WITH(nm::load_key(dir.file("none")), "key file " + dir.file("none") + ": cannot be read");
    std::ofstream(dir.file("short")) << "short";
    CHECK_THROWS_WITH(nm::load_key(dir.file("short")), "key file " + dir.file("short") +
                                                           ": 5 bytes; at least 16 (make one with: head -c 32 /dev/urandom > " +
                                                           dir.file("short") + ")");
    std::ofstream(dir.file("good")) << "0123456789abcdef0123456789abcdef";
    CHECK(nm::load_key(dir.file("good")).size() == 32);
}

#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "agent/key_file.hpp"
#include "core/base/error.hpp"
#include "tests/support/matrix_world.hpp"

namespace {

std::string write_key(const nm::test::TempDir& dir, const std::string& name, const std::string& bytes, mode_t mode) {
    std::ofstream(dir.file(name)) << bytes;
    REQUIRE(::chmod(dir.file(name).c_str(), mode) == 0);
    return dir.file(name);
}

const std::string k32 = "0123456789abcdef0123456789abcdef";

}  // namespace

TEST_CASE("Key files: a private regular file of 32 to 4096 bytes is the key, anything else is a usage error naming the file", "[unit]") {
    nm::test::TempDir dir;
    CHECK(nm::load_key(write_key(dir, "good", k32, 0600)).bytes() == k32);
    CHECK(nm::load_key(write_key(dir, "ro", k32 + "\n", 0400)).size() == 33);  // a trailing newline is part of it
    CHECK(nm::load_key(write_key(dir, "max", std::string(4096, 'x'), 0600)).size() == 4096);

    CHECK_THROWS_WITH(nm::load_key(dir.file("none")), "key file " + dir.file("none") + ": cannot be read (No such file or directory)");
    const auto shorter = write_key(dir, "short", "short", 0600);
    CHECK_THROWS_WITH(nm::load_key(shorter),
                      "key file " + shorter + ": 5 bytes; at least 32 (make one with: head -c 32 /dev/urandom > " + shorter + ")");
    const auto world = write_key(dir, "world", k32, 0644);
    CHECK_THROWS_WITH(nm::load_key(world), "key file " + world + ": mode 0644 lets group and others read it; chmod 600 " + world);
    const auto group = write_key(dir, "group", k32, 0640);
    CHECK_THROWS_WITH(nm::load_key(group), "key file " + group + ": mode 0640 lets group read it; chmod 600 " + group);
    const auto writable = write_key(dir, "writable", k32, 0602);
    CHECK_THROWS_WITH(nm::load_key(writable), "key file " + writable + ": mode 0602 lets others write it; chmod 600 " + writable);
    const auto big = write_key(dir, "big", std::string(4097, 'x'), 0600);
    CHECK_THROWS_WITH(nm::load_key(big),
                      "key file " + big + ": longer than 4096 bytes; a key is 32 random bytes (head -c 32 /dev/urandom > " + big + ")");
    std::filesystem::create_directories(dir.file("d"));
    CHECK_THROWS_WITH(nm::load_key(dir.file("d")), "key file " + dir.file("d") + ": not a regular file");
    // A FIFO neither hangs the open nor the read.
    REQUIRE(::mkfifo(dir.file("fifo").c_str(), 0600) == 0);
    CHECK_THROWS_WITH(nm::load_key(dir.file("fifo")), "key file " + dir.file("fifo") + ": not a regular file");
    CHECK_THROWS_WITH(nm::load_key("/dev/zero"), Catch::Contains("not a regular file"));
    try {
        nm::load_key(world);
    } catch (const nm::Error& e) {
        CHECK(e.kind() == nm::ErrorKind::Usage);
    }
}

TEST_CASE("Key files: one owned by another user is refused", "[unit]") {
    nm::test::TempDir dir;
    const auto path = write_key(dir, "theirs", k32, 0600);
    if (::geteuid() != 0) {
        SUCCEED("needs root to give the file away");
        return;
    }
    REQUIRE(::chown(path.c_str(), 4321, 4321) == 0);
    CHECK_THROWS_WITH(nm::load_key(path), "key file " + path + ": owned by uid 4321, neither root nor this user (uid 0); chown it");
}

TEST_CASE("Secret keys wipe their bytes when moved from or assigned over", "[unit]") {
    nm::SecretKey a(k32);
    nm::SecretKey b = a;
    CHECK(b.bytes() == k32);
    nm::SecretKey c(std::move(a));
    CHECK(c.bytes() == k32);
    CHECK(a.size() == 0);  // NOLINT(bugprone-use-after-move): the moved-from key is wiped and empty
    b = nm::SecretKey(std::string(40, 'z'));
    CHECK(b.bytes() == std::string(40, 'z'));
    std::string s = "secret";
    nm::wipe(s);
    CHECK(s.empty());
}

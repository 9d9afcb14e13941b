#include <catch2/catch.hpp>

#include "core/base/error.hpp"

TEST_CASE("Error formats action, interface, errno text and the kernel's extack", "[unit]") {
    const nm::Error e(nm::ErrorKind::Refused, "set mtu=9600", std::error_code(EINVAL, std::generic_category()),
                      {"eth1", "mtu", "mtu greater than device maximum"});
    CHECK(std::string(e.what()) == "set mtu=9600 on eth1: Invalid argument (kernel: \"mtu greater than device maximum\")");
    CHECK(e.kind() == nm::ErrorKind::Refused);
    CHECK(e.context().setting == "mtu");
}

TEST_CASE("Error without interface or code is just the action", "[unit]") {
    const nm::Error e = nm::usage_error("--name: bad");
    CHECK(std::string(e.what()) == "--name: bad");
    CHECK(e.kind() == nm::ErrorKind::Usage);
}

TEST_CASE("system_error classifies permission problems as refusals", "[unit]") {
    CHECK(nm::system_error("open", EPERM).kind() == nm::ErrorKind::Refused);
    CHECK(nm::system_error("open", EACCES).kind() == nm::ErrorKind::Refused);
    CHECK(nm::system_error("open", EIO).kind() == nm::ErrorKind::Failed);
    CHECK(std::string(nm::system_error("open x", ENOENT).what()) == "open x: No such file or directory");
}

#include "tests/support/served_lab.hpp"

#include <catch2/catch.hpp>

#include "core/base/error.hpp"
#include "core/base/wait_until.hpp"
#include "tests/support/command.hpp"
#include "tests/support/oracles.hpp"

namespace nm::test {

void wait_for_output(Background& process, const std::string& text) {
    try {
        wait_until([&] { return process.output().find(text) != std::string::npos; }, std::chrono::seconds(10), "\"" + text + "\"");
    } catch (const Error& e) {
        FAIL(e.what() << "; it printed:\n" << process.output());
    }
}

ServedLab::ServedLab()
    : server("ip netns exec " + lab.server().netns + " " + nicmatrix_binary() + " serve", dir.file("serve.log"), std::chrono::seconds(300)) {
    wait_for_output(server, "listening");
    wait_for_lab_path(lab.info());
}

}  // namespace nm::test

#include "tests/support/watched_server.hpp"

#include <chrono>
#include <future>

#include "core/base/wait_until.hpp"
#include "tests/support/temp_dir.hpp"

namespace nm::test {

WatchedRun run_against_watched_server(const ScopedLab& lab, const std::string& watcher, const std::string& run_args) {
    const TempDir dir;  // declared first: the server (the future below) has ended before it goes
    const std::string file = dir.file("watched.txt");
    const std::string bin = nicmatrix_binary();
    const std::string port = "5301";
    auto server = std::async(std::launch::async, [&] {
        return run_in_netns(lab.server().netns, watcher + " -o " + file + " " + bin + " serve --once -p " + port, std::chrono::seconds(20));
    });
    nm::wait_until([&] { return run_in_netns(lab.server().netns, "ss -tlnH sport = :" + port).output.find("LISTEN") != std::string::npos; },
                   std::chrono::seconds(10), "the server listening");
    auto client = run_in_netns(lab.client().netns, bin + " run -c " + nm::strip_prefix(lab.server().ipv4) + " -p " + port + " " + run_args,
                               std::chrono::seconds(20));
    server.get();
    return {std::move(client), run_command("cat " + file).output};
}

}  // namespace nm::test

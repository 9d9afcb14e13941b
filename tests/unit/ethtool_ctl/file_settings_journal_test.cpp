#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <memory>

#include "core/base/error.hpp"
#include "core/base/json_codec.hpp"
#include "ethtool_ctl/file_settings_journal.hpp"

namespace {

// A device model: features change their wanted and active state together; an absent name is an
// unknown interface (Usage), as with the real control.
struct FakeDevices {
    std::map<std::string, nm::LinkState> links;
    std::vector<nm::LinkSettings> applied;
};

class FakeControl : public nm::DeviceControl {
public:
    explicit FakeControl(FakeDevices& d) : d_(d) {}
    nm::LinkState read(std::string_view ifname) override {
        const auto it = d_.links.find(std::string(ifname));
        if (it == d_.links.end()) throw nm::usage_error("no such interface: " + std::string(ifname));
        return it->second;
    }
    void validate(std::string_view, const nm::LinkSettings&) override {}
    nm::ApplyReport apply(std::string_view ifname, const nm::LinkSettings& wanted) override {
        auto& s = d_.links.at(std::string(ifname));
        d_.applied.push_back(wanted);
        for (const auto& [name, on] : wanted.features) s.features.at(name) = {on, on, false};
        if (wanted.mtu) s.mtu = *wanted.mtu;
        nm::ApplyReport r;
        r.ifname = std::string(ifname);
        r.mtu_after = s.mtu;
        return r;
    }

private:
    FakeDevices& d_;
};

nm::LinkState link(const std::string& name, uint32_t mtu, bool tso) {
    nm::LinkState s;
    s.name = name;
    s.mtu = mtu;
    s.features["tx-tcp-segmentation"] = {tso, tso, false};
    s.features["rx-lro"] = {false, false, true};
    s.feature_order = {"tx-tcp-segmentation", "rx-lro"};
    return s;
}

struct TempDir {
    std::string path;
    TempDir() {
        char tmpl[] = "/tmp/nmjournalXXXXXX";
        path = ::mkdtemp(tmpl);
    }
    ~TempDir() {
        std::system(("rm -rf " + path).c_str());
    }
};

}  // namespace

TEST_CASE("The journal keeps the first state of each interface and restores wanted features and MTU", "[unit]") {
    TempDir dir;
    FakeDevices devices;
    devices.links["eth1"] = link("eth1", 1500, true);
    const auto factory = [&](const std::string&) { return std::make_unique<FakeControl>(devices); };
    const std::string path = dir.path + "/sub/journal.json";
    nm::FileSettingsJournal journal(path, factory);

    journal.remember(devices.links["eth1"]);
    devices.links["eth1"] = link("eth1", 9000, false);       // the change
    journal.remember(devices.links["eth1"]);                  // a later state does not replace the original
    REQUIRE(journal.entries().size() == 1);
    CHECK(journal.entries()[0].mtu == 1500);
    struct stat st {};
    CHECK(::stat(path.c_str(), &st) == 0);

    // A second process (a fresh object on the same file) finds the entry: this is restore after SIGKILL.
    nm::FileSettingsJournal after_crash(path, factory);
    const auto reports = after_crash.restore();
    REQUIRE(reports.size() == 1);
    CHECK(reports[0].note.empty());
    CHECK(devices.links["eth1"].mtu == 1500);
    CHECK(devices.links["eth1"].features.at("tx-tcp-segmentation").active);
    // Only changeable features whose wanted state moved are sent; fixed ones never.
    REQUIRE(devices.applied.size() == 1);
    CHECK(devices.applied[0].features == std::map<std::string, bool>{{"tx-tcp-segmentation", true}});
    CHECK(after_crash.entries().empty());
    CHECK(::stat(path.c_str(), &st) != 0);

    // Twice is harmless.
    CHECK(after_crash.restore().empty());
    CHECK(devices.applied.size() == 1);
}

TEST_CASE("A vanished interface is dropped with a note; one that does not hold is kept", "[unit]") {
    TempDir dir;
    FakeDevices devices;
    devices.links["eth1"] = link("eth1", 1500, true);
    devices.links["eth2"] = link("eth2", 1500, true);
    const auto factory = [&](const std::string&) { return std::make_unique<FakeControl>(devices); };
    nm::FileSettingsJournal journal(dir.path + "/j.json", factory);
    journal.remember(devices.links["eth1"]);
    journal.remember(devices.links["eth2"]);
    devices.links.erase("eth1");
    devices.links["eth2"].features.at("tx-tcp-segmentation") = {false, false, false};
    devices.links["eth2"].features.at("rx-lro") = {true, true, true};  // a fixed feature that drifted: not ours to fix

    const auto reports = journal.restore();
    REQUIRE(reports.size() == 2);
    CHECK_THAT(reports[0].note, Catch::Contains("eth1") && Catch::Contains("dropped"));
    CHECK(reports[1].note.empty());
    CHECK(journal.entries().empty());
}

TEST_CASE("A corrupt journal is an error that names the file, not an empty journal", "[unit]") {
    TempDir dir;
    const std::string path = dir.path + "/j.json";
    std::ofstream(path) << "{not json";
    nm::FileSettingsJournal journal(path, [](const std::string&) -> std::unique_ptr<nm::DeviceControl> { return nullptr; });
    CHECK_THROWS_WITH(journal.entries(), Catch::Contains(path));
    CHECK_THROWS_AS(journal.remember(link("eth1", 1500, true)), nm::Error);
}

TEST_CASE("The journal path comes from NICMATRIX_JOURNAL when set", "[unit]") {
    ::setenv("NICMATRIX_JOURNAL", "/tmp/x/j.json", 1);
    CHECK(nm::FileSettingsJournal::default_path() == "/tmp/x/j.json");
    ::unsetenv("NICMATRIX_JOURNAL");
    CHECK(nm::FileSettingsJournal::default_path() == "/run/nicmatrix/journal.json");
}

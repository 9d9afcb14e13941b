#include <catch2/catch.hpp>

#include <linux/ethtool.h>

#include <cerrno>
#include <cstring>
#include <map>

#include "core/base/error.hpp"
#include "ethtool_ctl/ethtool_ioctl.hpp"
#include "ethtool_ctl/feature_access.hpp"

namespace {

// A scripted SIOCETHTOOL: answers GSSET_INFO/GSTRINGS/GFEATURES/SFEATURES from a small device model, or
// refuses everything with EOPNOTSUPP; records the commands it saw.
class ScriptedIoctl : public nm::EthtoolIoctl {
public:
    std::vector<std::string> names{"tx-scatter-gather", "tx-checksum-ipv4", "rx-gro", "tx-tcp-segmentation"};
    uint32_t available = 0b1101, requested = 0b1001, active = 0b1001, never_changed = 0;
    bool refuse = false;
    std::vector<uint32_t> commands;
    uint32_t last_valid = 0, last_requested = 0;

    int call(std::string_view ifname, void* data, size_t len) override {
        uint32_t cmd = 0;
        std::memcpy(&cmd, data, sizeof cmd);
        commands.push_back(cmd);
        if (refuse) throw nm::system_error("SIOCETHTOOL", EOPNOTSUPP, {std::string(ifname), "", ""});
        switch (cmd) {
            case ETHTOOL_GSSET_INFO: {
                auto* info = static_cast<ethtool_sset_info*>(data);
                REQUIRE(info->sset_mask == (1ULL << ETH_SS_FEATURES));
                info->data[0] = static_cast<uint32_t>(names.size());
                return 0;
            }
            case ETHTOOL_GSTRINGS: {
                auto* s = static_cast<ethtool_gstrings*>(data);
                REQUIRE(s->len == names.size());
                REQUIRE(len >= sizeof(*s) + names.size() * ETH_GSTRING_LEN);
                for (size_t i = 0; i < names.size(); ++i)
                    std::strncpy(reinterpret_cast<char*>(s->data + i * ETH_GSTRING_LEN), names[i].c_str(), ETH_GSTRING_LEN);
                return 0;
            }
            case ETHTOOL_GFEATURES: {
                auto* g = static_cast<ethtool_gfeatures*>(data);
                REQUIRE(g->size == 1);
                g->features[0] = {available, requested, active, never_changed};
                return 0;
            }
            case ETHTOOL_SFEATURES: {
                auto* s = static_cast<ethtool_sfeatures*>(data);
                last_valid = s->features[0].valid;
                last_requested = s->features[0].requested;
                const uint32_t valid = last_valid & available;
                requested = (requested & ~valid) | (last_requested & valid);
                active = requested;
                return 0;
            }
            default: FAIL("unexpected ioctl " << cmd);
        }
        return 0;
    }
};

// Stands in for the genetlink path: either answers or throws the error it is given.
class ScriptedNetlink : public nm::FeatureAccess {
public:
    int fail_with = 0;
    int reads = 0;
    std::string path() const override { return "netlink"; }
    nm::FeatureBits read(std::string_view ifname) override {
        ++reads;
        if (fail_with != 0) throw nm::system_error("netlink request", fail_with, {std::string(ifname), "", ""});
        nm::FeatureBits b;
        b.names = {"rx-gro"};
        b.hw = b.wanted = b.active = b.nochange = {false};
        return b;
    }
    nm::FeatureSetResult set(std::string_view, const nm::FeatureBits& before, const nm::FeatureRequest&) override { return {before.active, {}}; }
};

}  // namespace

TEST_CASE("Features come from genetlink when it answers, and the ioctl is not touched", "[unit]") {
    ScriptedNetlink netlink;
    ScriptedIoctl io;
    nm::IoctlFeatures ioctl(io);
    const auto r = nm::read_features([&]() -> nm::FeatureAccess& { return netlink; }, ioctl, false, "eth9");
    CHECK(r.access->path() == "netlink");
    CHECK(io.commands.empty());
}

TEST_CASE("EOPNOTSUPP from genetlink switches to the ioctl path, which decodes names and bits", "[unit]") {
    ScriptedNetlink netlink;
    netlink.fail_with = EOPNOTSUPP;
    ScriptedIoctl io;
    nm::IoctlFeatures ioctl(io);
    const auto r = nm::read_features([&]() -> nm::FeatureAccess& { return netlink; }, ioctl, false, "eth9");
    CHECK(r.access->path() == "ioctl");
    CHECK(io.commands == std::vector<uint32_t>{ETHTOOL_GSSET_INFO, ETHTOOL_GSTRINGS, ETHTOOL_GFEATURES});
    CHECK(r.bits.names == io.names);
    CHECK(r.bits.active == std::vector<bool>{true, false, false, true});
    CHECK(r.bits.fixed(1));  // tx-checksum-ipv4 not available
    CHECK_FALSE(r.bits.fixed(2));

    // Setting goes through SFEATURES with exactly the requested bits, and the read-back is the result.
    const auto set = r.access->set("eth9", r.bits, {{2, true}, {3, false}});
    CHECK(io.last_valid == 0b1100);
    CHECK(io.last_requested == 0b0100);
    CHECK(set.active_after == std::vector<bool>{true, false, true, false});
}

TEST_CASE("A missing ethtool genetlink family also falls back, other errors do not", "[unit]") {
    ScriptedIoctl io;
    nm::IoctlFeatures ioctl(io);
    const auto missing_family = []() -> nm::FeatureAccess& {
        throw nm::Error(nm::ErrorKind::Failed, "genetlink family \"ethtool\" is not in this kernel",
                        std::make_error_code(std::errc::operation_not_supported));
    };
    CHECK(nm::read_features(missing_family, ioctl, false, "eth9").access->path() == "ioctl");

    ScriptedNetlink netlink;
    netlink.fail_with = EPERM;
    io.commands.clear();
    CHECK_THROWS_WITH(nm::read_features([&]() -> nm::FeatureAccess& { return netlink; }, ioctl, false, "eth9"), Catch::Contains("not permitted"));
    CHECK(io.commands.empty());
}

TEST_CASE("force_ioctl skips genetlink, ioctl EOPNOTSUPP too is a clear refusal", "[unit]") {
    ScriptedNetlink netlink;
    ScriptedIoctl io;
    nm::IoctlFeatures ioctl(io);
    CHECK(nm::read_features([&]() -> nm::FeatureAccess& { return netlink; }, ioctl, true, "eth9").access->path() == "ioctl");
    CHECK(netlink.reads == 0);

    netlink.fail_with = EOPNOTSUPP;
    io.refuse = true;
    try {
        nm::read_features([&]() -> nm::FeatureAccess& { return netlink; }, ioctl, false, "eth9");
        FAIL("no error");
    } catch (const nm::Error& e) {
        CHECK(e.kind() == nm::ErrorKind::Refused);
        CHECK_THAT(e.what(), Catch::Contains("eth9") && Catch::Contains("neither"));
    }
}

TEST_CASE("Driver info decodes from ETHTOOL_GDRVINFO", "[unit]") {
    struct Drv : nm::EthtoolIoctl {
        int call(std::string_view, void* data, size_t) override {
            auto* info = static_cast<ethtool_drvinfo*>(data);
            REQUIRE(info->cmd == ETHTOOL_GDRVINFO);
            std::strcpy(info->driver, "e1000e");
            std::strcpy(info->version, "6.18");
            std::strcpy(info->fw_version, "0.13-4");
            std::strcpy(info->bus_info, "0000:00:19.0");
            return 0;
        }
    } io;
    const auto d = nm::ioctl_driver_info(io, "eth9");
    CHECK(d.driver == "e1000e");
    CHECK(d.firmware == "0.13-4");
    CHECK(d.bus_info == "0000:00:19.0");
}

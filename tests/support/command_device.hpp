#pragma once
// A DeviceControl over the `ethtool` and `ip` commands, inside one namespace: an independent stand-in for
// NetlinkDeviceControl, so the sweep runner is also tested against the real kernel's behaviour on veth
// (side effects of tx off, MTU changes, a bridge that drops jumbo frames) through another tool's path.
// Not for production: it parses ethtool's text output.
#include <map>
#include <string>
#include <vector>

#include "ethtool_ctl/device_control.hpp"

namespace nm::test {

class CommandDeviceControl final : public DeviceControl {
public:
    explicit CommandDeviceControl(std::string netns) : netns_(std::move(netns)) {}

    LinkState read(std::string_view ifname) override;
    void validate(std::string_view ifname, const LinkSettings& wanted) override;
    ApplyReport apply(std::string_view ifname, const LinkSettings& wanted) override;

    size_t applies = 0;

private:
    // ethtool -k: kernel feature states, and the kernel features behind each name ethtool shows.
    struct Snapshot {
        LinkState state;
        std::map<std::string, std::vector<std::string>> groups;
    };
    Snapshot snapshot(std::string_view ifname);
    std::vector<std::string> resolve(const Snapshot& s, const std::string& name) const;

    std::string netns_;
};

}  // namespace nm::test

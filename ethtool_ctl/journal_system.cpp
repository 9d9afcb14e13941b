#include "ethtool_ctl/journal_system.hpp"

#include "ethtool_ctl/netlink_device_control.hpp"
#include "ethtool_ctl/netns.hpp"

namespace nm {
namespace {

constexpr const char* kInitialNetns = "/proc/1/ns/net";

class RealJournalSystem final : public JournalSystem {
public:
    JournalOwner self() override {
        if (!self_) self_ = this_process();
        return *self_;
    }
    OwnerStatus status(const JournalOwner& owner) override { return owner_status(owner); }
    std::optional<std::string> find_netns(uint64_t dev, uint64_t ino) override { return nm::find_netns(NetnsId{dev, ino}); }
    std::string initial_netns() override { return kInitialNetns; }
    std::string describe_netns(uint64_t dev, uint64_t ino) override {
        const NetnsId id{dev, ino};
        if (auto name = netns_name_of(id); !name.empty()) return name;
        if (netns_id_of(kInitialNetns) == id) return "";
        return "netns:[" + std::to_string(ino) + "]";
    }
    std::unique_ptr<DeviceControl> control(const std::string& where) override { return std::make_unique<NetlinkDeviceControl>(where); }

private:
    std::optional<JournalOwner> self_;
};

}  // namespace

std::shared_ptr<JournalSystem> real_journal_system() { return std::make_shared<RealJournalSystem>(); }

}  // namespace nm

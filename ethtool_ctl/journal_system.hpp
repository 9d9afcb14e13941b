#pragma once
// What the restore journal needs of the system besides the file: who this process is, whether an owner
// still runs, where a namespace is, and device control inside it. The real one reads /proc and opens
// NetlinkDeviceControl; unit tests give a fake, so the journal's decisions are tested without root.
#include <memory>
#include <optional>
#include <string>

#include "ethtool_ctl/device_control.hpp"
#include "ethtool_ctl/journal_owner.hpp"
#include "ethtool_ctl/journal_types.hpp"

namespace nm {

class JournalSystem {
public:
    virtual ~JournalSystem() = default;

    /// This process as the owner of the entries it writes.
    virtual JournalOwner self() = 0;
    /// Whether `owner` still runs.
    virtual OwnerStatus status(const JournalOwner& owner) = 0;
    /// Where the namespace with identity (dev, ino) can be entered ("" = the caller's own, a /run/netns
    /// name or a /proc/PID/ns/net path); none when it is gone.
    virtual std::optional<std::string> find_netns(uint64_t dev, uint64_t ino) = 0;
    /// Where physical devices go when their namespace is deleted: the initial namespace (PID 1's).
    virtual std::string initial_netns() = 0;
    /// The namespace for people: its /run/netns name, "" for PID 1's, "netns:[INODE]" otherwise.
    virtual std::string describe_netns(uint64_t dev, uint64_t ino) = 0;
    /// Device control inside the namespace `where` (as find_netns returns it).
    virtual std::unique_ptr<DeviceControl> control(const std::string& where) = 0;
};

/// The real system: /proc for owners and namespaces, NetlinkDeviceControl for devices.
std::shared_ptr<JournalSystem> real_journal_system();

}  // namespace nm

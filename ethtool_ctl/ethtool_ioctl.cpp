#include "ethtool_ctl/ethtool_ioctl.hpp"

#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/base/error.hpp"

namespace nm {
namespace {

// The ioctl structs end in flexible arrays; u64 words keep ethtool_sset_info's u64 aligned.
class CmdBuffer {
public:
    explicit CmdBuffer(size_t bytes) : words_((bytes + 7) / 8, 0) {}
    template <typename T>
    T* as() noexcept {
        return reinterpret_cast<T*>(words_.data());
    }
    size_t size() const noexcept { return words_.size() * 8; }

private:
    std::vector<uint64_t> words_;
};

std::string fixed_string(const char* s, size_t max) { return std::string(s, strnlen(s, max)); }

uint32_t feature_count(EthtoolIoctl& io, std::string_view ifname) {
    CmdBuffer buf(sizeof(ethtool_sset_info) + sizeof(uint32_t));
    auto* info = buf.as<ethtool_sset_info>();
    info->cmd = ETHTOOL_GSSET_INFO;
    info->sset_mask = 1ULL << ETH_SS_FEATURES;
    io.call(ifname, info, buf.size());
    if (!(info->sset_mask & (1ULL << ETH_SS_FEATURES))) {
        throw Error(ErrorKind::Failed, "read feature names over ioctl", std::make_error_code(std::errc::operation_not_supported),
                    {std::string(ifname), "features", ""});
    }
    return info->data[0];
}

std::vector<std::string> feature_names(EthtoolIoctl& io, std::string_view ifname) {
    const uint32_t count = feature_count(io, ifname);
    CmdBuffer buf(sizeof(ethtool_gstrings) + size_t{count} * ETH_GSTRING_LEN);
    auto* strings = buf.as<ethtool_gstrings>();
    strings->cmd = ETHTOOL_GSTRINGS;
    strings->string_set = ETH_SS_FEATURES;
    strings->len = count;
    io.call(ifname, strings, buf.size());
    std::vector<std::string> names;
    for (uint32_t i = 0; i < count; ++i) {
        names.push_back(fixed_string(reinterpret_cast<const char*>(strings->data + size_t{i} * ETH_GSTRING_LEN), ETH_GSTRING_LEN));
    }
    return names;
}

}  // namespace

SiocEthtool::SiocEthtool() : sock_(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) {
    if (!sock_) throw system_error("open a socket for SIOCETHTOOL", errno);
}

int SiocEthtool::call(std::string_view ifname, void* data, size_t /*len*/) {
    if (ifname.empty() || ifname.size() >= IFNAMSIZ) {
        throw usage_error("interface name \"" + std::string(ifname) + "\" is not valid (1 to 15 characters)");
    }
    ifreq ifr{};
    std::memcpy(ifr.ifr_name, ifname.data(), ifname.size());
    ifr.ifr_data = static_cast<char*>(data);
    const int rc = ::ioctl(sock_.get(), SIOCETHTOOL, &ifr);
    if (rc < 0) {
        const int err = errno;
        if (err == ENODEV) throw usage_error("no such interface: " + std::string(ifname));
        uint32_t cmd = 0;
        std::memcpy(&cmd, data, sizeof cmd);
        throw system_error("SIOCETHTOOL command " + std::to_string(cmd), err, {std::string(ifname), "", ""});
    }
    return rc;
}

DriverInfo ioctl_driver_info(EthtoolIoctl& io, std::string_view ifname) {
    ethtool_drvinfo info{};
    info.cmd = ETHTOOL_GDRVINFO;
    io.call(ifname, &info, sizeof info);
    return DriverInfo{fixed_string(info.driver, sizeof info.driver), fixed_string(info.version, sizeof info.version),
                      fixed_string(info.fw_version, sizeof info.fw_version), fixed_string(info.bus_info, sizeof info.bus_info)};
}

LinkModes ioctl_link_modes(EthtoolIoctl& io, std::string_view ifname) {
    ethtool_cmd cmd{};
    cmd.cmd = ETHTOOL_GSET;
    io.call(ifname, &cmd, sizeof cmd);
    LinkModes out;
    const uint32_t speed = ethtool_cmd_speed(&cmd);
    if (speed != 0 && speed != static_cast<uint32_t>(SPEED_UNKNOWN) && speed != 0xFFFF) out.speed_mbps = speed;
    out.duplex = cmd.duplex == DUPLEX_FULL ? "full" : cmd.duplex == DUPLEX_HALF ? "half" : "";
    return out;
}

FeatureBits IoctlFeatures::read(std::string_view ifname) {
    FeatureBits out;
    out.names = feature_names(io_, ifname);
    const size_t count = out.names.size();
    const uint32_t blocks = static_cast<uint32_t>((count + 31) / 32);
    CmdBuffer buf(sizeof(ethtool_gfeatures) + blocks * sizeof(ethtool_get_features_block));
    auto* get = buf.as<ethtool_gfeatures>();
    get->cmd = ETHTOOL_GFEATURES;
    get->size = blocks;
    io_.call(ifname, get, buf.size());
    out.hw.assign(count, false);
    out.wanted.assign(count, false);
    out.active.assign(count, false);
    out.nochange.assign(count, false);
    for (size_t i = 0; i < count; ++i) {
        const auto& block = get->features[i / 32];
        const uint32_t bit = 1U << (i % 32);
        out.hw[i] = block.available & bit;
        out.wanted[i] = block.requested & bit;
        out.active[i] = block.active & bit;
        out.nochange[i] = block.never_changed & bit;
    }
    return out;
}

FeatureSetResult IoctlFeatures::set(std::string_view ifname, const FeatureBits& before, const FeatureRequest& request) {
    const uint32_t blocks = static_cast<uint32_t>((before.size() + 31) / 32);
    CmdBuffer buf(sizeof(ethtool_sfeatures) + blocks * sizeof(ethtool_set_features_block));
    auto* set = buf.as<ethtool_sfeatures>();
    set->cmd = ETHTOOL_SFEATURES;
    set->size = blocks;
    for (const auto& [bit, on] : request) {
        set->features[bit / 32].valid |= 1U << (bit % 32);
        if (on) set->features[bit / 32].requested |= 1U << (bit % 32);
    }
    // A positive result carries ETHTOOL_F_WISH / ETHTOOL_F_UNSUPPORTED; the read-back below shows the
    // same facts bit by bit, so it is the one source used.
    io_.call(ifname, set, buf.size());
    const FeatureBits after = read(ifname);
    FeatureSetResult out;
    out.active_after = after.active;
    out.wanted_differs.assign(before.size(), false);
    for (const auto& [bit, on] : request) {
        if (bit < after.size()) out.wanted_differs[bit] = after.active[bit] != on;
    }
    return out;
}

}  // namespace nm

#pragma once
// ethtool over generic netlink (family "ethtool", kernel 5.6+): string sets, features, link modes, rings,
// coalescing, channels. Decoders are pure functions of the reply bytes; EthtoolNetlink sends the requests.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <linux/ethtool_netlink.h>

#include "ethtool_ctl/feature_access.hpp"
#include "ethtool_ctl/netlink_socket.hpp"

namespace nm {

/// An ethtool bitset attribute decoded; compact (VALUE/MASK words) and verbose (BITS list) give the same.
struct Bitset {
    size_t size = 0;
    std::vector<bool> value;
    std::vector<bool> mask;  ///< all false when the kernel sent no mask (ETHTOOL_A_BITSET_NOMASK)
    bool has_mask = false;
};

/// Decodes the payload of an ETHTOOL_A_*_{HW,WANTED,...} bitset nest. Throws nm::Error (Failed) if malformed.
Bitset decode_bitset(nl::Bytes nest_payload);

/// The strings of string set `set_id` in an ETHTOOL_MSG_STRSET_GET_REPLY, by index.
std::vector<std::string> decode_string_set(nl::Bytes message, uint32_t set_id);

/// An ETHTOOL_MSG_FEATURES_GET_REPLY with the feature names it is indexed by.
FeatureBits decode_features(nl::Bytes message, std::vector<std::string> names);

/// An ETHTOOL_MSG_FEATURES_SET_REPLY: WANTED holds the requested bits that did not come out as
/// requested, ACTIVE the bits whose active state changed (both as value+mask). `before` completes it.
FeatureSetResult decode_features_set_reply(nl::Bytes message, const FeatureBits& before);

/// Speed and duplex from ETHTOOL_MSG_LINKMODES_GET_REPLY.
struct LinkModes {
    std::optional<uint32_t> speed_mbps;  ///< none for SPEED_UNKNOWN
    std::string duplex;                  ///< "full", "half" or ""
};
LinkModes decode_link_modes(nl::Bytes message);

/// The integer attributes of a RINGS/COALESCE/CHANNELS reply, by ethtool's lower-case attribute names.
std::map<std::string, uint64_t> decode_rings(nl::Bytes message);
std::map<std::string, uint64_t> decode_coalesce(nl::Bytes message);
std::map<std::string, uint64_t> decode_channels(nl::Bytes message);

/// A client of the ethtool genetlink family in the namespace it was opened in.
class EthtoolNetlink {
public:
    /// Opens a genetlink socket in the calling thread's namespace and resolves the family at run time.
    /// Throws nm::Error with code EOPNOTSUPP when the kernel has no "ethtool" family.
    static EthtoolNetlink open();

    /// The kernel's ETH_SS_FEATURES names (global string set), by bit.
    std::vector<std::string> feature_names();
    /// FEATURES_GET; `compact` false asks for verbose (named bit list) bitsets, which decode the same.
    FeatureBits features(std::string_view ifname, bool compact = true);
    /// One FEATURES_SET with every bit of `request` in a compact WANTED bitset; returns the kernel's reply.
    FeatureSetResult set_features(std::string_view ifname, const FeatureBits& before, const FeatureRequest& request);
    LinkModes link_modes(std::string_view ifname);
    /// Empty when the driver does not have them (EOPNOTSUPP), like veth for rings and coalescing; then
    /// `why`, when given, gets the kernel's reason ("Operation not supported").
    std::map<std::string, uint64_t> rings(std::string_view ifname, std::string* why = nullptr);
    std::map<std::string, uint64_t> coalesce(std::string_view ifname, std::string* why = nullptr);
    std::map<std::string, uint64_t> channels(std::string_view ifname, std::string* why = nullptr);
    /// CHANNELS_SET / RINGS_SET / COALESCE_SET with the given attributes, named as TuningRequest names
    /// them ("rx", "rx-jumbo", "rx-usecs", "adaptive-rx"). Throws nm::Error with the kernel's extack;
    /// Usage for a name these tables do not have.
    void set_channels(std::string_view ifname, const std::map<std::string, uint32_t>& values);
    void set_rings(std::string_view ifname, const std::map<std::string, uint32_t>& values);
    void set_coalesce(std::string_view ifname, const std::map<std::string, uint32_t>& values);

    nl::NetlinkSocket& socket() noexcept { return sock_; }

private:
    EthtoolNetlink(nl::NetlinkSocket sock, uint16_t family) : sock_(std::move(sock)), family_(family) {}
    /// A GET for `ifname` with compact bitsets; returns the one reply message's bytes.
    std::vector<uint8_t> get(uint8_t cmd, uint16_t header_attr, std::string_view ifname, const std::string& what,
                             uint32_t flags = ETHTOOL_FLAG_COMPACT_BITSETS);

    void set_u32s(uint8_t cmd, uint16_t header_attr, std::string_view ifname, const std::string& what, const std::map<std::string, uint32_t>& values,
                  const std::map<std::string, std::pair<uint16_t, bool>>& table);

    nl::NetlinkSocket sock_;
    uint16_t family_;
};

/// The names a TuningRequest may use for channels, rings and coalescing (`ethtool -L/-G/-C` words).
const std::vector<std::string>& tuning_field_names(std::string_view kind);

/// A decoded RINGS/COALESCE/CHANNELS map (decoder names: "rx_count", "rx_jumbo", "use_adaptive_rx")
/// in TuningRequest's names ("rx", "rx-jumbo", "adaptive-rx"); channels maximums go to `max`.
std::map<std::string, uint64_t> tuning_names(std::string_view kind, const std::map<std::string, uint64_t>& decoded,
                                             std::map<std::string, uint64_t>* max = nullptr);

/// FeatureAccess over ethtool netlink.
class NetlinkFeatures : public FeatureAccess {
public:
    explicit NetlinkFeatures(EthtoolNetlink& nl) : nl_(nl) {}
    std::string path() const override { return "netlink"; }
    FeatureBits read(std::string_view ifname) override { return nl_.features(ifname); }
    FeatureSetResult set(std::string_view ifname, const FeatureBits& before, const FeatureRequest& request) override {
        return nl_.set_features(ifname, before, request);
    }

private:
    EthtoolNetlink& nl_;
};

}  // namespace nm

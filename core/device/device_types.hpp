#pragma once
// Value types of device control: what an interface is and has, what is asked of it, what it did.
// Produced by ethtool_ctl, consumed by matrix, cli and bindings. Plain values; JSON in json_codec_device.cpp.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/base/field_list.hpp"
#include "core/device/tuning_types.hpp"

namespace nm {

/// One kernel feature (a bit of the kernel's "features" string set), as `ethtool -k` shows it.
struct FeatureState {
    bool active = false;  ///< what the device does now (ETHTOOL_A_FEATURES_ACTIVE)
    bool wanted = false;  ///< what was requested (ETHTOOL_A_FEATURES_WANTED)
    bool fixed = false;   ///< cannot be changed: not in the hw (changeable) set, or in the nochange set
};

constexpr auto json_fields(const FeatureState*) {
    using S = FeatureState;
    return field_list(field("active", &S::active, kFieldRequired), field("wanted", &S::wanted, kFieldRequired),
                      field("fixed", &S::fixed, kFieldRequired));
}

struct DriverInfo {
    std::string driver;
    std::string version;
    std::string firmware;
    std::string bus_info;
};

constexpr auto json_fields(const DriverInfo*) {
    using S = DriverInfo;
    return field_list(field("driver", &S::driver), field("version", &S::version), field("firmware", &S::firmware), field("bus_info", &S::bus_info));
}

/// The link layer's state as rtnetlink reports it (RTM_GETLINK), cheap enough to read every few
/// milliseconds while a change settles.
struct CarrierState {
    bool admin_up = false;            ///< IFF_UP: the interface is set up
    bool carrier = false;             ///< IFLA_CARRIER (IFF_LOWER_UP): the device has a link
    std::string operstate;            ///< IFLA_OPERSTATE as `ip link` words: "up", "down", "unknown", ...
    uint32_t carrier_down_count = 0;  ///< IFLA_CARRIER_DOWN_COUNT: carrier losses since the device was made
};

/// What the link did after one change on one interface: a real NIC resets itself on an MTU, ring or some
/// feature changes, and its link is down until it has negotiated again (seconds); veth never drops it.
struct LinkSettle {
    /// How long carrier was lost after the change, 0 when it never was. Measured by polling every 10 ms:
    /// from the first poll that saw it lost (from the start of the change when the kernel had already
    /// counted a loss by the time the change returned) until the poll that saw it back.
    double link_down_s = 0;
    uint32_t carrier_drops = 0;  ///< carrier losses the kernel counted meanwhile (IFLA_CARRIER_DOWN_COUNT delta)
    /// From the end of the change until carrier and operstate were up again (0 when they never left).
    double wait_s = 0;
    bool back = true;   ///< carrier and operstate up again within the bound
    std::string state;  ///< when not back: what the link showed at the bound ("no carrier, operstate down")
};

constexpr auto json_fields(const LinkSettle*) {
    using S = LinkSettle;
    return field_list(field("link_down_s", &S::link_down_s, kFieldRequired), field("carrier_drops", &S::carrier_drops), field("wait_s", &S::wait_s),
                      field("back", &S::back), field("state", &S::state, kFieldOmitEmpty));
}

/// What the links of a sweep's ends did after one cell's change (set by a sweep on the first run measured
/// after each change; the runs after it in the same visit had no change before them).
struct ChangeLink {
    /// One end's link after the change.
    struct End {
        std::string end;  ///< "local", "remote" or "dut"
        std::string ifname;
        LinkSettle link;
    };
    double link_down_s = 0;  ///< the longest carrier loss of any end (0 when no end lost it)
    /// What the sweep waited after the change before measuring: each end's wait for its link (summed:
    /// the ends are changed one after the other) and, when a link had dropped, the wait from the last
    /// end's change until the path answered a probe again (a frame of at most 1280 bytes).
    double settle_s = 0;
    std::vector<End> ends;  ///< the ends that were changed and could tell
};

/// The rtnl_link_stats64 counters of an interface (IFLA_STATS64), including the detailed error fields.
struct LinkCounters {
    uint64_t rx_packets = 0, tx_packets = 0, rx_bytes = 0, tx_bytes = 0;
    uint64_t rx_errors = 0, tx_errors = 0, rx_dropped = 0, tx_dropped = 0;
    uint64_t multicast = 0, collisions = 0;
    uint64_t rx_length_errors = 0, rx_over_errors = 0, rx_crc_errors = 0, rx_frame_errors = 0;
    uint64_t rx_fifo_errors = 0, rx_missed_errors = 0;
    uint64_t tx_aborted_errors = 0, tx_carrier_errors = 0, tx_fifo_errors = 0, tx_heartbeat_errors = 0, tx_window_errors = 0;
    uint64_t rx_nohandler = 0;
};

constexpr auto json_fields(const LinkCounters*) {
    using S = LinkCounters;
    return field_list(
        field("rx_packets", &S::rx_packets), field("tx_packets", &S::tx_packets), field("rx_bytes", &S::rx_bytes), field("tx_bytes", &S::tx_bytes),
        field("rx_errors", &S::rx_errors), field("tx_errors", &S::tx_errors), field("rx_dropped", &S::rx_dropped),
        field("tx_dropped", &S::tx_dropped), field("multicast", &S::multicast), field("collisions", &S::collisions),
        field("rx_length_errors", &S::rx_length_errors), field("rx_over_errors", &S::rx_over_errors), field("rx_crc_errors", &S::rx_crc_errors),
        field("rx_frame_errors", &S::rx_frame_errors), field("rx_fifo_errors", &S::rx_fifo_errors), field("rx_missed_errors", &S::rx_missed_errors),
        field("tx_aborted_errors", &S::tx_aborted_errors), field("tx_carrier_errors", &S::tx_carrier_errors),
        field("tx_fifo_errors", &S::tx_fifo_errors), field("tx_heartbeat_errors", &S::tx_heartbeat_errors),
        field("tx_window_errors", &S::tx_window_errors), field("rx_nohandler", &S::rx_nohandler));
}

/// Which interface this is, whatever it is called now: names change (`ip link set X name Y`), and the same
/// name can exist in every network namespace. The restore journal finds an interface again by these.
struct LinkIdentity {
    uint64_t netns_dev = 0;    ///< the network namespace: st_dev of its nsfs file (0 = unknown)
    uint64_t netns_ino = 0;    ///< and its st_ino, as `ls -iL /proc/self/ns/net` shows it
    int32_t ifindex = 0;       ///< in that namespace (0 = unknown)
    std::string perm_address;  ///< IFLA_PERM_ADDRESS as "aa:bb:cc:dd:ee:ff"; "" when the device has none (veth)
    std::string kind;          ///< IFLA_INFO_KIND ("veth", "bridge", "dummy"); "" for a physical device

    /// True when the namespace and the index are known (read from the kernel, not a fake or an old file).
    bool known() const { return netns_ino != 0 && ifindex != 0; }
    /// True when both name the same namespace (and both are known).
    bool same_netns(const LinkIdentity& other) const { return netns_ino != 0 && netns_ino == other.netns_ino && netns_dev == other.netns_dev; }
};

constexpr auto json_fields(const LinkIdentity*) {
    using S = LinkIdentity;
    return field_list(field("netns_dev", &S::netns_dev), field("netns_ino", &S::netns_ino), field("ifindex", &S::ifindex),
                      field("perm_address", &S::perm_address), field("kind", &S::kind));
}

/// Everything nicmatrix knows about one interface at one moment.
struct LinkState {
    std::string name;
    std::string netns;      ///< "" = the caller's namespace
    LinkIdentity identity;  ///< who it is beyond its name (the bus info is in `driver`)
    DriverInfo driver;
    std::optional<uint32_t> speed_mbps;  ///< none when the link reports no speed (veth, link down)
    std::string duplex;                  ///< "full", "half" or "" when unknown
    std::string operstate;               ///< "up", "down", "unknown", ... (IFLA_OPERSTATE)
    uint32_t mtu = 0;
    uint32_t mtu_min = 0;                          ///< IFLA_MIN_MTU
    uint32_t mtu_max = 0;                          ///< IFLA_MAX_MTU
    std::map<std::string, FeatureState> features;  ///< every kernel feature by its kernel name
    std::vector<std::string> feature_order;        ///< kernel feature names in string-set (bit) order
    std::map<std::string, uint64_t> rings;         ///< ETHTOOL_A_RINGS_*; empty when the driver has none
    std::map<std::string, uint64_t> coalesce;      ///< ETHTOOL_A_COALESCE_*; empty when the driver has none
    std::map<std::string, uint64_t> channels;      ///< ETHTOOL_A_CHANNELS_*; empty when the driver has none
    TuningState tuning;                            ///< queues, steering, NAPI, sysctls, root qdisc (issue 15)
    LinkCounters counters;
};

constexpr auto json_fields(const LinkState*) {
    using S = LinkState;
    return field_list(field("name", &S::name, kFieldRequired), field("netns", &S::netns), field("identity", &S::identity),
                      field("driver", &S::driver), field("speed_mbps", &S::speed_mbps), field("duplex", &S::duplex),
                      field("operstate", &S::operstate), field("mtu", &S::mtu, kFieldRequired), field("mtu_min", &S::mtu_min),
                      field("mtu_max", &S::mtu_max), field("features", &S::features), field("feature_order", &S::feature_order),
                      field("rings", &S::rings), field("coalesce", &S::coalesce), field("channels", &S::channels), field("tuning", &S::tuning),
                      field("counters", &S::counters));
}

/// One interrupt of an interface (/proc/irq/N), with the CPUs it may run on.
struct IrqAffinity {
    uint32_t irq = 0;
    std::string affinity;  ///< /proc/irq/N/smp_affinity_list ("0-3"); "" when unreadable
};

constexpr auto json_fields(const IrqAffinity*) {
    using S = IrqAffinity;
    return field_list(field("irq", &S::irq, kFieldRequired), field("affinity", &S::affinity));
}

/// One queue of an interface and the CPU mask steering it (/sys/class/net/X/queues/NAME): rps_cpus of an
/// rx queue, xps_cpus of a tx queue, as the kernel prints it (hex words joined by ','); none when the
/// kernel does not let it be read (built without RPS/XPS).
struct QueueMask {
    std::string queue;  ///< "rx-0", "tx-3"
    std::optional<std::string> mask;
};

constexpr auto json_fields(const QueueMask*) {
    using S = QueueMask;
    return field_list(field("queue", &S::queue, kFieldRequired), field("mask", &S::mask));
}

/// How the kernel runs one interface beyond its ethtool settings, read when a sweep starts.
struct InterfaceSystem {
    std::string qdisc;              ///< the root qdisc's kind ("noqueue", "pfifo_fast", "mq", "tbf"); "" when none was found
    std::string qdisc_handle;       ///< its handle as tc prints it ("0:", "8001:")
    std::vector<IrqAffinity> irqs;  ///< the device's MSI/legacy IRQs; empty when it has none (veth)
    std::vector<QueueMask> rps;     ///< per rx queue
    std::vector<QueueMask> xps;     ///< per tx queue
    std::optional<int> numa_node;   ///< the device's NUMA node; none without a device or when it reports -1
};

constexpr auto json_fields(const InterfaceSystem*) {
    using S = InterfaceSystem;
    return field_list(field_group("qdisc", field("kind", &S::qdisc), field("handle", &S::qdisc_handle)), field("irqs", &S::irqs, kFieldIfTyped),
                      field("rps_cpus", &S::rps, kFieldIfTyped), field("xps_cpus", &S::xps, kFieldIfTyped), field("numa_node", &S::numa_node));
}

/// What a user asks of an interface. Feature names are as typed: ethtool's group names
/// ("tx-checksumming"), short aliases ("tso") or kernel names ("tx-tcp-segmentation"); ethtool_ctl
/// resolves them against the kernel's string set. Anything not named is left as it is.
struct LinkSettings {
    std::optional<uint32_t> mtu;
    std::map<std::string, bool> features;
    TuningRequest tuning;  ///< channels, rings, coalescing, RPS/XPS, IRQ affinity, NAPI, sysctls, qdisc

    bool empty() const { return !mtu && features.empty() && tuning.empty(); }
};

constexpr auto json_fields(const LinkSettings*) {
    using S = LinkSettings;
    return field_list(field("mtu", &S::mtu), field("features", &S::features), field("tuning", &S::tuning, kFieldOmitEmpty));
}

/// What became of one setting, in the words `ethtool -K` uses.
enum class SettingOutcome {
    Applied,      ///< changed as requested
    AlreadySet,   ///< was already so; nothing to do
    Fixed,        ///< the device cannot change it ("[fixed]")
    Unsupported,  ///< requested but the kernel did not do it ("[requested on]" that stayed off)
    SideEffect,   ///< not requested, changed anyway ("[not requested]"): tx off takes TSO with it
};

/// One kernel feature touched by an apply, requested or not.
struct FeatureChange {
    std::string name;               ///< kernel feature name
    std::string requested_as;       ///< the name the user typed for it; empty for side effects
    std::optional<bool> requested;  ///< none for side effects
    bool before = false;            ///< active before
    bool after = false;             ///< active after, as read back
    SettingOutcome outcome = SettingOutcome::Applied;
};

constexpr auto json_fields(const FeatureChange*) {
    using S = FeatureChange;
    return field_list(field("name", &S::name, kFieldRequired), field("requested_as", &S::requested_as), field("requested", &S::requested),
                      field("before", &S::before, kFieldRequired), field("after", &S::after, kFieldRequired),
                      field("outcome", &S::outcome, kFieldRequired));
}

struct MtuChange {
    uint32_t requested = 0;
    uint32_t before = 0;
    uint32_t after = 0;  ///< as read back
    SettingOutcome outcome = SettingOutcome::Applied;
};

constexpr auto json_fields(const MtuChange*) {
    using S = MtuChange;
    return field_list(field("requested", &S::requested, kFieldRequired), field("before", &S::before, kFieldRequired),
                      field("after", &S::after, kFieldRequired), field("outcome", &S::outcome, kFieldRequired));
}

/// One setting of a TuningRequest touched by an apply: "channels.rx", "rps.rx-0", "sysctl.net.ipv4.tcp_congestion_control", "qdisc".
struct TuningChange {
    std::string setting;
    std::string requested;  ///< as asked, in the form the state reads back ("2", "0-1", "tbf rate_bps=...")
    std::string before;
    std::string after;  ///< as read back
    SettingOutcome outcome = SettingOutcome::Applied;
};

constexpr auto json_fields(const TuningChange*) {
    using S = TuningChange;
    return field_list(field("setting", &S::setting, kFieldRequired), field("requested", &S::requested), field("before", &S::before),
                      field("after", &S::after), field("outcome", &S::outcome, kFieldRequired));
}

/// The result of applying LinkSettings to one interface: every setting touched, and the state read back.
struct ApplyReport {
    std::string ifname;
    std::string netns;
    std::string path;  ///< "netlink" or "ioctl": how the features were set
    std::vector<FeatureChange> features;
    std::optional<MtuChange> mtu;
    std::map<std::string, bool> active_after;  ///< every feature's active state after the change
    uint32_t mtu_after = 0;
    std::vector<TuningChange> tuning;  ///< every tuning setting asked, in the order applied
    std::string note;                  ///< why nothing was done, e.g. a restore whose interface is gone
    /// What the link did after the change, when the caller asked to wait for it and the link had carrier
    /// before (apply_recorded with a link wait); none otherwise.
    std::optional<LinkSettle> link;

    /// True when every requested setting ended as requested (Applied or AlreadySet).
    bool all_requested_hold() const;
};

/// The codec adds the computed "all_requested_hold" (written, not read).
constexpr auto json_fields_and_more(const ApplyReport*) {
    using S = ApplyReport;
    return field_list(field("ifname", &S::ifname, kFieldRequired), field("netns", &S::netns), field("path", &S::path),
                      field("features", &S::features), field("mtu", &S::mtu), field("active_after", &S::active_after),
                      field("mtu_after", &S::mtu_after), field("tuning", &S::tuning, kFieldOmitEmpty), field("note", &S::note),
                      field("link", &S::link, kFieldOmitEmpty));
}

/// What puts an interface that is now in `now` back to `before`: the MTU when it differs, and the wanted
/// state of every feature `before` could change whose wanted state differs (in kernel names), and every
/// tuning setting that moved (tuning_back_to). Empty when nothing differs.
LinkSettings settings_back_to(const LinkState& before, const LinkState& now);

}  // namespace nm

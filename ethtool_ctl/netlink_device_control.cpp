#include "ethtool_ctl/netlink_device_control.hpp"

#include <netlink/socket.h>

#include <cerrno>

#include "core/base/error.hpp"
#include "ethtool_ctl/feature_names.hpp"
#include "ethtool_ctl/interface_system.hpp"
#include "ethtool_ctl/netns.hpp"
#include "ethtool_ctl/netns_files.hpp"
#include "ethtool_ctl/tuning_files.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <type_traits>

#include "core/device/cpu_list.hpp"
#include "core/device/sysctl_allow_list.hpp"

namespace nm {

struct NetlinkDeviceControl::Plan {
    FeatureRequest request;
    std::map<size_t, std::string> typed;  ///< bit -> the name the user typed for it
};

namespace {

// Sockets must be created inside the namespace; the scope is only needed while they are opened.
std::optional<EthtoolNetlink> open_genl(const std::string& netns, std::exception_ptr& error) {
    NetnsScope scope(netns);
    try {
        return EthtoolNetlink::open();
    } catch (const Error&) {
        error = std::current_exception();
        return std::nullopt;
    }
}

// The namespace the rtnetlink socket really lives in. SIOCGSKNS says so exactly but needs CAP_NET_ADMIN;
// without it (`show` as a user) the namespace file is looked at instead.
NetnsId netns_of(const RtnlSocket& rtnl, const std::string& netns) {
    if (const auto id = socket_netns_id(nl_socket_get_fd(rtnl.get()))) return *id;
    NetnsScope scope(netns);
    return current_netns_id();
}

SiocEthtool open_ioctl(const std::string& netns) {
    NetnsScope scope(netns);
    return SiocEthtool();
}

QdiscControl open_qdisc(const std::string& netns) {
    NetnsScope scope(netns);
    return QdiscControl();
}

std::string cpu_list_for(const std::string& list) { return format_cpu_list(parse_cpu_list(list, host_cpu_count())); }

template <typename Map>
std::string value_of(const Map& m, const std::string& key) {
    const auto it = m.find(key);
    if (it == m.end()) return "";
    if constexpr (std::is_same_v<typename Map::mapped_type, std::string>) {
        return it->second;
    } else {
        return std::to_string(it->second);
    }
}

SettingOutcome tuning_outcome(const std::string& requested, const std::string& before, const std::string& after) {
    if (after != requested) return SettingOutcome::Unsupported;
    return before == requested ? SettingOutcome::AlreadySet : SettingOutcome::Applied;
}

std::string where(std::string_view ifname, const std::string& netns) {
    return netns.empty() ? std::string(ifname) : std::string(ifname) + " (netns " + netns + ")";
}

void check_mtu_range(std::string_view ifname, const std::string& netns, uint32_t mtu, const RtnlLinkInfo& link) {
    const bool below = link.mtu_min != 0 && mtu < link.mtu_min;
    const bool above = link.mtu_max != 0 && mtu > link.mtu_max;
    if (below || above) {
        throw usage_error("set mtu=" + std::to_string(mtu) + " on " + where(ifname, netns) + ": outside the device's range " +
                          std::to_string(link.mtu_min) + ".." + std::to_string(link.mtu_max));
    }
}

// The IPv6 addresses of interface `ifindex` in `netns`, as /proc/net/if_inet6 lists them (hex, the
// thread's namespace: read inside it).
std::vector<std::string> ipv6_addresses(const std::string& netns, int32_t ifindex) {
    std::vector<std::string> out;
    in_netns(netns, [&] {
        const auto text = read_small_file("/proc/thread-self/net/if_inet6");
        if (!text) return;
        std::istringstream in(*text);
        std::string addr, index, rest;
        while (in >> addr >> index && std::getline(in, rest)) {
            if (std::strtol(index.c_str(), nullptr, 16) != ifindex || addr.size() != 32) continue;
            std::string shown;
            for (size_t i = 0; i < 32; i += 4) shown += (i == 0 ? "" : ":") + addr.substr(i, 4);
            out.push_back(shown);
        }
    });
    return out;
}

// Below 1280 the kernel drops every IPv6 address of the interface (IPv6's minimum MTU), and putting the
// MTU back does not bring them back: refused while it has any, before anything changes.
void check_ipv6_mtu(std::string_view ifname, const std::string& netns, uint32_t mtu, const RtnlLinkInfo& link) {
    if (mtu >= 1280 || mtu == link.mtu) return;
    const auto addresses = ipv6_addresses(netns, link.ifindex);
    if (addresses.empty()) return;
    throw usage_error("set mtu=" + std::to_string(mtu) + " on " + where(ifname, netns) + ": below 1280 the kernel removes the interface's " +
                      std::to_string(addresses.size()) + " IPv6 address" + (addresses.size() == 1 ? "" : "es") + " (" + addresses.front() +
                      (addresses.size() > 1 ? ", ..." : "") + ") and does not put them back; remove them first, or use an MTU of 1280 or more");
}

SettingOutcome outcome_of(bool fixed, bool requested, bool before, bool after) {
    if (before == requested) return after == requested ? SettingOutcome::AlreadySet : SettingOutcome::Unsupported;
    if (fixed) return SettingOutcome::Fixed;
    return after == requested ? SettingOutcome::Applied : SettingOutcome::Unsupported;
}

}  // namespace

NetlinkDeviceControl::NetlinkDeviceControl(std::string netns, DeviceControlOptions options)
    : netns_(std::move(netns)),
      options_(options),
      rtnl_(RtnlSocket::open(netns_)),
      netns_id_(netns_of(rtnl_, netns_)),
      genl_(open_genl(netns_, genl_error_)),
      ioctl_(open_ioctl(netns_)),
      qdisc_(open_qdisc(netns_)),
      ioctl_features_(ioctl_) {
    if (genl_) netlink_features_ = std::make_unique<NetlinkFeatures>(*genl_);
}

void NetlinkDeviceControl::set_tap(const nl::MessageHandler& tap) {
    tap_ = tap;
    if (genl_) genl_->socket().set_tap(tap);
}

FeatureReading NetlinkDeviceControl::read_feature_bits(std::string_view ifname) {
    const auto netlink = [this]() -> FeatureAccess& {
        if (!netlink_features_) std::rethrow_exception(genl_error_);
        return *netlink_features_;
    };
    return read_features(netlink, ioctl_features_, options_.force_ioctl, ifname);
}

LinkState NetlinkDeviceControl::read(std::string_view ifname) {
    const RtnlLinkInfo link = rtnl_.link_info(ifname, tap_ ? std::function<void(nl::Bytes)>(tap_) : nullptr);
    LinkState state;
    state.name = std::string(ifname);
    state.netns = netns_;
    state.mtu = link.mtu;
    state.mtu_min = link.mtu_min;
    state.mtu_max = link.mtu_max;
    state.operstate = link.operstate;
    state.counters = link.counters;
    state.identity.netns_dev = netns_id_.dev;
    state.identity.netns_ino = netns_id_.ino;
    state.identity.ifindex = link.ifindex;
    state.identity.perm_address = link.perm_address;
    state.identity.kind = link.kind;

    const FeatureBits bits = read_feature_bits(ifname).bits;
    for (size_t i = 0; i < bits.size(); ++i) {
        if (bits.names[i].empty()) continue;
        state.feature_order.push_back(bits.names[i]);
        state.features[bits.names[i]] = FeatureState{bits.active[i], bits.wanted[i], bits.fixed(i)};
    }
    try {
        state.driver = ioctl_driver_info(ioctl_, ifname);
    } catch (const Error& e) {
        if (e.code().value() != EOPNOTSUPP) throw;
    }
    // Speed and duplex follow the features' path: the ioctl when it is forced or genetlink is missing.
    try {
        const LinkModes modes = (genl_ && !options_.force_ioctl) ? genl_->link_modes(ifname) : ioctl_link_modes(ioctl_, ifname);
        state.speed_mbps = modes.speed_mbps;
        state.duplex = modes.duplex;
    } catch (const Error& e) {
        if (e.code().value() != EOPNOTSUPP) throw;
    }
    std::string rings_why = "ethtool netlink is missing", coalesce_why = rings_why, channels_why = rings_why;
    if (genl_) {
        state.rings = genl_->rings(ifname, &rings_why);
        state.coalesce = genl_->coalesce(ifname, &coalesce_why);
        state.channels = genl_->channels(ifname, &channels_why);
    }
    state.tuning = read_tuning(ifname, link.ifindex, state);
    if (state.rings.empty()) state.tuning.unsupported["rings"] = rings_why;
    if (state.coalesce.empty()) state.tuning.unsupported["coalesce"] = coalesce_why;
    if (state.channels.empty()) state.tuning.unsupported["channels"] = channels_why;
    return state;
}

TuningState NetlinkDeviceControl::read_tuning(std::string_view ifname, int32_t ifindex, const LinkState& base) {
    TuningState t;
    t.channels = tuning_names("channels", base.channels, &t.channels_max);
    t.rings = tuning_names("rings", base.rings);
    t.coalesce = tuning_names("coalesce", base.coalesce);
    read_tuning_files(netns_, std::string(ifname), t);
    t.qdisc = qdisc_.root(ifindex);
    try {
        t.qdisc_tree = qdisc_.tree(ifindex);
        if (!t.qdisc_tree->refused.empty()) t.unsupported["qdisc"] = "its qdisc tree cannot be put back exactly: " + t.qdisc_tree->refused;
    } catch (const Error& e) {
        t.unsupported["qdisc"] = std::string("its qdisc tree cannot be read: ") + e.what();
    }
    return t;
}

std::string NetlinkDeviceControl::unsupported(std::string_view ifname, const LinkSettings& wanted) {
    const TuningRequest& w = wanted.tuning;
    if (w.empty()) return {};
    const LinkState s = read(ifname);
    const TuningState& t = s.tuning;
    std::string why;
    const auto add = [&](const std::string& text) { why += (why.empty() ? "" : "; ") + text; };
    const auto kind_missing = [&](const char* kind) {
        const auto it = t.unsupported.find(kind);
        if (it == t.unsupported.end()) return false;
        add(std::string(kind) + ": " + it->second);
        return true;
    };
    if (!w.channels.empty() && !kind_missing("channels")) {
        for (const auto& [name, n] : w.channels) {
            const auto max = t.channels_max.find(name);
            const uint64_t m = max == t.channels_max.end() ? 0 : max->second;
            if (n > m) add("channels " + name + " " + std::to_string(n) + ": above the device's maximum " + std::to_string(m));
        }
    }
    if (!w.rings.empty() && !kind_missing("rings")) {
        for (const auto& [name, n] : w.rings) {
            std::string key = name;
            std::replace(key.begin(), key.end(), '-', '_');
            const auto max = s.rings.find(key + "_max");
            if (max != s.rings.end() && n > max->second)
                add("rings " + name + " " + std::to_string(n) + ": above the device's maximum " + std::to_string(max->second));
        }
    }
    if (!w.coalesce.empty()) kind_missing("coalesce");
    if (!w.rps.empty()) kind_missing("rps");
    if (!w.xps.empty()) kind_missing("xps");
    if (!w.napi.empty()) kind_missing("napi");
    if (!w.irq_affinity.empty()) kind_missing("irq_affinity");
    if (w.qdisc) kind_missing("qdisc");
    // Outside the host's namespace the kernel lets a namespace choose only the congestion controls the host
    // allows (tcp_allowed_congestion_control); any other is EPERM however privileged the writer.
    if (const auto cc = w.sysctl.find("net.ipv4.tcp_congestion_control"); cc != w.sysctl.end() && netns_id_of("/proc/1/ns/net") != netns_id_) {
        std::string allowed;
        in_netns(netns_,
                 [&] { allowed = normalize_sysctl_value(read_small_file("/proc/sys/net/ipv4/tcp_allowed_congestion_control").value_or("")); });
        const std::string padded = " " + allowed + " ";
        if (!allowed.empty() && padded.find(" " + cc->second + " ") == std::string::npos) {
            add("sysctl net.ipv4.tcp_congestion_control " + cc->second +
                ": a namespace other than the host's may choose only what the host's net.ipv4.tcp_allowed_congestion_control lists (" + allowed +
                ")");
        }
    }
    // A sysctl the namespace shows read-only (net.core.rmem_max outside the host's on current kernels).
    std::vector<std::string> read_only;
    in_netns(netns_, [&] {
        for (const auto& [name, value] : w.sysctl) {
            if (t.sysctl.count(name) && ::access(sysctl_path(name).c_str(), W_OK) != 0) read_only.push_back(name + " (" + std::strerror(errno) + ")");
        }
    });
    for (const auto& name : read_only) add("sysctl " + name + ": read-only in the namespace of " + where(ifname, netns_));
    for (const auto& [name, value] : w.sysctl) {
        if (!t.sysctl.count(name)) {
            add("sysctl " + name + ": not in the namespace of " + where(ifname, netns_) +
                (find_sysctl(name) != nullptr && !find_sysctl(name)->per_netns ? " (a host-wide setting; only the host's own namespace has it)"
                                                                               : ""));
        }
    }
    return why.empty() ? why : where(ifname, netns_) + ": " + why;
}

std::optional<InterfaceSystem> NetlinkDeviceControl::describe(std::string_view ifname) {
    try {
        return read_interface_system(netns_, ifname);
    } catch (const Error&) {
        return std::nullopt;
    }
}

std::optional<CarrierState> NetlinkDeviceControl::carrier(std::string_view ifname) { return rtnl_.link_info(ifname).link; }

std::vector<std::string> NetlinkDeviceControl::link_names() {
    std::vector<std::string> names;
    for (const auto& link : rtnl_.list_links()) names.push_back(link.name);
    return names;
}

NetlinkDeviceControl::Plan NetlinkDeviceControl::plan(std::string_view ifname, const LinkSettings& wanted, const FeatureBits& bits,
                                                      const RtnlLinkInfo& link) const {
    if (wanted.mtu) {
        check_mtu_range(ifname, netns_, *wanted.mtu, link);
        check_ipv6_mtu(ifname, netns_, *wanted.mtu, link);
    }
    Plan plan;
    for (const auto& [typed, on] : wanted.features) {
        const ResolvedFeature resolved = resolve_feature_name(typed, bits.names, where(ifname, netns_));
        std::vector<size_t> targets;
        for (const auto& name : resolved.kernel_names) targets.push_back(*bits.index(name));
        // A group stands for its changeable members (`tx` on veth includes the fixed tx-checksum-ipv4);
        // only a group whose members are all fixed asks the fixed ones, and gets them reported Fixed.
        if (resolved.group) {
            std::vector<size_t> changeable;
            for (size_t bit : targets) {
                if (!bits.fixed(bit)) changeable.push_back(bit);
            }
            if (!changeable.empty()) targets = changeable;
        }
        for (size_t bit : targets) {
            const auto [it, inserted] = plan.request.emplace(bit, on);
            if (!inserted && it->second != on) {
                throw usage_error("features " + plan.typed[bit] + " and " + typed + " ask opposite states of " + bits.names[bit] + " on " +
                                  where(ifname, netns_));
            }
            plan.typed.emplace(bit, typed);
        }
    }
    return plan;
}

void NetlinkDeviceControl::validate(std::string_view ifname, const LinkSettings& wanted) {
    const RtnlLinkInfo link = rtnl_.link_info(ifname);
    const FeatureBits bits = wanted.features.empty() ? FeatureBits{} : read_feature_bits(ifname).bits;
    plan(ifname, wanted, bits, link);
    const TuningRequest& w = wanted.tuning;
    const unsigned cpus = host_cpu_count();
    const auto check_cpus = [&](const std::string& field, const std::string& list) {
        try {
            parse_cpu_list(list, cpus);
        } catch (const Error& e) {
            throw usage_error(field + " on " + where(ifname, netns_) + ": " + e.what());
        }
    };
    for (const auto& [q, list] : w.rps) check_cpus("rps", list);
    for (const auto& [q, list] : w.xps) check_cpus("xps", list);
    for (const auto& [n, list] : w.irq_affinity) check_cpus("irq_affinity", list);
    for (const auto& [name, v] : w.sysctl) {
        if (find_sysctl(name) == nullptr) throw usage_error("sysctl " + name + ": not on the allow-list (nicmatrix sweep --help prints it)");
    }
    if (w.qdisc) {
        try {
            probe_qdisc(*w.qdisc);
        } catch (const Error& e) {
            if (e.kind() != ErrorKind::Usage) throw;
            throw usage_error("qdisc " + std::string(e.what()));
        }
    }
}

ApplyReport NetlinkDeviceControl::apply(std::string_view ifname, const LinkSettings& wanted) {
    const RtnlLinkInfo link = rtnl_.link_info(ifname);
    FeatureReading reading = read_feature_bits(ifname);
    const FeatureBits& before = reading.bits;
    // Everything is checked before the first change, so bad input changes nothing.
    const Plan planned = plan(ifname, wanted, before, link);
    if (wanted.tuning.qdisc) {
        // Replacing the root takes the whole tree with it: only a tree restore can rebuild is replaced.
        QdiscTree tree;
        try {
            tree = qdisc_.tree(link.ifindex);
        } catch (const Error& e) {
            throw usage_error("qdisc on " + where(ifname, netns_) + ": its qdisc tree cannot be read: " + e.what());
        }
        if (!tree.refused.empty())
            throw usage_error("qdisc on " + where(ifname, netns_) +
                              ": its qdisc tree cannot be put back exactly, so it is left alone: " + tree.refused);
    }

    ApplyReport report;
    report.ifname = std::string(ifname);
    report.netns = netns_;
    report.path = reading.access->path();

    const bool change_mtu = wanted.mtu && *wanted.mtu != link.mtu;
    if (change_mtu) rtnl_.set_mtu(ifname, *wanted.mtu);

    FeatureSetResult result{before.active, std::vector<bool>(before.size(), false)};
    if (!planned.request.empty()) {
        try {
            result = reading.access->set(ifname, before, planned.request);
        } catch (...) {
            // Leave the interface as it was found: the MTU went first, so take it back.
            if (change_mtu) {
                try {
                    rtnl_.set_mtu(ifname, link.mtu);
                } catch (const Error&) {
                    // The original error is the one to report; the journal still holds the MTU.
                }
            }
            throw;
        }
    }

    const FeatureBits after = reading.access->read(ifname);
    const RtnlLinkInfo link_after = rtnl_.link_info(ifname);
    for (size_t i = 0; i < after.size() && i < before.size(); ++i) {
        const auto req = planned.request.find(i);
        if (req != planned.request.end()) {
            FeatureChange c;
            c.name = before.names[i];
            c.requested_as = planned.typed.at(i);
            c.requested = req->second;
            c.before = before.active[i];
            c.after = after.active[i];
            // The kernel's reply is the truth of what the request did; the read-back must agree with it.
            const bool did = result.active_after[i] == req->second && after.active[i] == req->second;
            c.outcome = outcome_of(before.fixed(i), req->second, before.active[i], did ? req->second : !req->second);
            report.features.push_back(c);
        } else if (before.active[i] != after.active[i] || before.active[i] != result.active_after[i]) {
            FeatureChange c;
            c.name = before.names[i];
            c.before = before.active[i];
            c.after = after.active[i];
            c.outcome = SettingOutcome::SideEffect;
            report.features.push_back(c);
        }
        if (!after.names[i].empty()) report.active_after[after.names[i]] = after.active[i];
    }
    if (wanted.mtu) {
        MtuChange m;
        m.requested = *wanted.mtu;
        m.before = link.mtu;
        m.after = link_after.mtu;
        m.outcome = !change_mtu ? SettingOutcome::AlreadySet : link_after.mtu == *wanted.mtu ? SettingOutcome::Applied : SettingOutcome::Unsupported;
        report.mtu = m;
    }
    report.mtu_after = link_after.mtu;
    if (!wanted.tuning.empty()) {
        const LinkState before_tuning = read(ifname);
        apply_tuning(ifname, link.ifindex, wanted.tuning, report, before_tuning);
    }
    return report;
}

// In the order a driver needs them: queue counts first (they decide which rx-N/tx-N exist), then ring
// sizes and moderation, then the per-queue and per-device files, the namespace's sysctls and the qdisc.
void NetlinkDeviceControl::apply_tuning(std::string_view ifname, int32_t ifindex, const TuningRequest& w, ApplyReport& report,
                                        const LinkState& before) {
    const std::string name(ifname);
    const auto need_genl = [&](const char* kind) -> EthtoolNetlink& {
        if (!genl_) throw Error(ErrorKind::Usage, std::string("set ") + kind + " on " + where(ifname, netns_) + ": ethtool netlink is missing");
        return *genl_;
    };
    if (!w.channels.empty()) need_genl("channels").set_channels(ifname, w.channels);
    if (!w.rings.empty()) need_genl("rings").set_rings(ifname, w.rings);
    if (!w.coalesce.empty()) need_genl("coalesce").set_coalesce(ifname, w.coalesce);
    write_tuning_files(netns_, name, w);
    if (w.qdisc) qdisc_.replace(ifindex, *w.qdisc, where(ifname, netns_));
    if (w.qdisc_original) qdisc_.rebuild(ifindex, *w.qdisc_original, where(ifname, netns_));

    const LinkState now = read(ifname);
    const TuningState& a = now.tuning;
    const TuningState& b = before.tuning;
    const auto record = [&](const std::string& setting, const std::string& requested, const std::string& was, const std::string& is) {
        report.tuning.push_back({setting, requested, was, is, tuning_outcome(requested, was, is)});
    };
    for (const auto& [k, v] : w.channels) record("channels." + k, std::to_string(v), value_of(b.channels, k), value_of(a.channels, k));
    for (const auto& [k, v] : w.rings) record("rings." + k, std::to_string(v), value_of(b.rings, k), value_of(a.rings, k));
    for (const auto& [k, v] : w.coalesce) record("coalesce." + k, std::to_string(v), value_of(b.coalesce, k), value_of(a.coalesce, k));
    const auto queues = [&](const char* kind, const std::map<std::string, std::string>& asked, const std::map<std::string, std::string>& was,
                            const std::map<std::string, std::string>& is) {
        for (const auto& [q, list] : asked) {
            const std::string want = cpu_list_for(list);
            if (q != "*") {
                record(std::string(kind) + "." + q, want, value_of(was, q), value_of(is, q));
                continue;
            }
            for (const auto& [queue, now_list] : is) {
                if (!asked.count(queue)) record(std::string(kind) + "." + queue, want, value_of(was, queue), now_list);
            }
        }
    };
    queues("rps", w.rps, b.rps, a.rps);
    queues("xps", w.xps, b.xps, a.xps);
    for (const auto& [k, v] : w.napi) record("napi." + k, std::to_string(v), value_of(b.napi, k), value_of(a.napi, k));
    for (const auto& [n, list] : a.irq_affinity) {
        auto it = w.irq_affinity.find(n);
        if (it == w.irq_affinity.end()) it = w.irq_affinity.find("*");
        if (it != w.irq_affinity.end()) record("irq_affinity." + n, cpu_list_for(it->second), value_of(b.irq_affinity, n), list);
    }
    for (const auto& [k, v] : w.sysctl) record("sysctl." + k, normalize_sysctl_value(v), value_of(b.sysctl, k), value_of(a.sysctl, k));
    if (w.qdisc) {
        const std::string was = b.qdisc ? describe_qdisc(*b.qdisc) : "";
        const std::string is = a.qdisc ? describe_qdisc(*a.qdisc) : "";
        const bool holds = a.qdisc && qdisc_matches(*w.qdisc, *a.qdisc);
        report.tuning.push_back({"qdisc", describe_qdisc(*w.qdisc), was, is,
                                 !holds                                           ? SettingOutcome::Unsupported
                                 : (b.qdisc && qdisc_matches(*w.qdisc, *b.qdisc)) ? SettingOutcome::AlreadySet
                                                                                  : SettingOutcome::Applied});
    }
    if (w.qdisc_original) {
        const std::string want = describe_qdisc_tree(*w.qdisc_original);
        const std::string was = b.qdisc_tree ? describe_qdisc_tree(*b.qdisc_tree) : "";
        const bool holds = qdisc_tree_back(*w.qdisc_original, a.qdisc_tree);
        report.tuning.push_back({"qdisc", want, was, a.qdisc_tree ? describe_qdisc_tree(*a.qdisc_tree) : "",
                                 holds ? SettingOutcome::Applied : SettingOutcome::Unsupported});
    }
}

}  // namespace nm

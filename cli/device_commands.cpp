// show / set / restore: device control like `ethtool -i -k`, `ethtool -K` and `ip link set mtu`, verified.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "cli/commands.hpp"
#include "core/base/error.hpp"
#include "core/device/device_codec.hpp"
#include "core/device/tuning_codec.hpp"
#include "ethtool_ctl/capture.hpp"
#include "ethtool_ctl/feature_names.hpp"
#include "ethtool_ctl/file_settings_journal.hpp"
#include "ethtool_ctl/journal_codec.hpp"
#include "ethtool_ctl/netlink_attrs.hpp"
#include "ethtool_ctl/netlink_device_control.hpp"
#include "ethtool_ctl/qdisc.hpp"
#include "ethtool_ctl/setting_writes.hpp"

namespace nm::cli {
namespace {

const char* on_off(bool v) { return v ? "on" : "off"; }

std::string where(const std::string& ifname, const std::string& netns) { return netns.empty() ? ifname : ifname + " (netns " + netns + ")"; }

// "NAME=on|off", parsed once here at the edge.
std::pair<std::string, bool> parse_feature_arg(const std::string& arg) {
    const auto eq = arg.find('=');
    const std::string value = eq == std::string::npos ? "" : arg.substr(eq + 1);
    if (eq == std::string::npos || eq == 0 || (value != "on" && value != "off")) {
        throw usage_error("--feature: expected NAME=on or NAME=off, got \"" + arg + "\"");
    }
    return {arg.substr(0, eq), value == "on"};
}

// The document `show --json` prints: ethtool -i, the link, and every name ethtool -k prints.
Json show_json(const LinkState& s) {
    Json j{{"name", s.name},
           {"driver", s.driver.driver},
           {"driver_version", s.driver.version},
           {"firmware", s.driver.firmware},
           {"bus_info", s.driver.bus_info},
           {"speed_mbps", nullptr},
           {"duplex", s.duplex},
           {"mtu", s.mtu},
           {"mtu_min", s.mtu_min},
           {"mtu_max", s.mtu_max},
           {"features", ethtool_k_view(s.feature_order, s.features)}};
    if (s.speed_mbps) j["speed_mbps"] = *s.speed_mbps;
    j["tuning"] = s.tuning;
    return j;
}

void print_show(const LinkState& s) {
    std::cout << "driver: " << s.driver.driver << "\nversion: " << s.driver.version << "\nfirmware-version: " << s.driver.firmware
              << "\nbus-info: " << s.driver.bus_info << '\n';
    std::cout << "speed: " << (s.speed_mbps ? std::to_string(*s.speed_mbps) + "Mb/s" : std::string("Unknown!"))
              << "\nduplex: " << (s.duplex.empty() ? std::string("Unknown!") : s.duplex) << "\noperstate: " << s.operstate << "\nmtu: " << s.mtu
              << " (min " << s.mtu_min << ", max " << s.mtu_max << ")\n";
    // Like ethtool -l/-g/-c, the sysfs steering files, NAPI and `tc qdisc show dev IF root`.
    const TuningState& t = s.tuning;
    const auto unsupported = [&](const char* kind) {
        const auto it = t.unsupported.find(kind);
        return it == t.unsupported.end() ? std::string() : it->second;
    };
    // One line per kind: its name=value pairs (counts or CPU lists), or n/a with the kernel's reason.
    const auto print_kind = [&](const char* title, const auto& m, const char* kind) {
        std::cout << title << ':';
        if (m.empty()) {
            const std::string why = unsupported(kind);
            std::cout << " n/a" << (why.empty() ? "" : " (" + why + ")") << '\n';
            return;
        }
        for (const auto& [k, v] : m) std::cout << ' ' << k << '=' << v;
        std::cout << '\n';
    };
    print_kind("channels", t.channels, "channels");
    if (!t.channels_max.empty()) print_kind("channels max", t.channels_max, "channels");
    print_kind("rings", t.rings, "rings");
    print_kind("coalesce", t.coalesce, "coalesce");
    print_kind("rps_cpus", t.rps, "rps");
    print_kind("xps_cpus", t.xps, "xps");
    print_kind("irq affinity", t.irq_affinity, "irq_affinity");
    print_kind("napi", t.napi, "napi");
    std::cout << "root qdisc: " << (t.qdisc ? describe_qdisc(*t.qdisc) : std::string("none")) << '\n';
    std::cout << "Features for " << s.name << ":\n";
    for (const auto& row : ethtool_k_rows(s.feature_order)) {
        const FeatureState st = row_state(row, s.features);
        std::string suffix;
        if (!row.group_header) {
            if (st.fixed) {
                suffix = " [fixed]";
            } else if (st.active != st.wanted) {
                suffix = st.wanted ? " [requested on]" : " [requested off]";
            }
        }
        std::cout << (row.indented ? "\t" : "") << row.name << ": " << on_off(st.active) << suffix << '\n';
    }
}

// One line per setting, in the words ethtool -K uses for what did not go as asked.
void print_report(const ApplyReport& r) {
    std::cout << where(r.ifname, r.netns) << (r.path.empty() ? "" : " (features via " + r.path + ")") << ":\n";
    if (!r.note.empty()) std::cout << "  " << r.note << '\n';
    for (const auto& c : r.features) {
        std::cout << "  " << c.name << ": " << on_off(c.after);
        const std::string asked = c.requested ? std::string(" [requested ") + on_off(*c.requested) + "]" : "";
        switch (c.outcome) {
            case SettingOutcome::Applied: std::cout << " (was " << on_off(c.before) << ")"; break;
            case SettingOutcome::AlreadySet: std::cout << " (already)"; break;
            case SettingOutcome::Fixed: std::cout << " [fixed]" << asked; break;
            case SettingOutcome::Unsupported: std::cout << asked; break;
            case SettingOutcome::SideEffect: std::cout << " [not requested]"; break;
        }
        if (!c.requested_as.empty() && c.requested_as != c.name) std::cout << "  <- " << c.requested_as;
        std::cout << '\n';
    }
    if (r.mtu) {
        std::cout << "  mtu: " << r.mtu->after;
        switch (r.mtu->outcome) {
            case SettingOutcome::Applied: std::cout << " (was " << r.mtu->before << ")"; break;
            case SettingOutcome::AlreadySet: std::cout << " (already)"; break;
            default: std::cout << " [requested " << r.mtu->requested << "]"; break;
        }
        std::cout << '\n';
    }
    if (r.link && (r.link->carrier_drops > 0 || r.link->link_down_s > 0 || !r.link->back)) {
        char line[160];
        std::snprintf(line, sizeof line, "  link: carrier lost %.2f s (%u drop%s), %s %.2f s after the change\n", r.link->link_down_s,
                      r.link->carrier_drops, r.link->carrier_drops == 1 ? "" : "s", r.link->back ? "back" : "still not back", r.link->wait_s);
        std::cout << line;
        if (!r.link->back) std::cout << "  link now: " << r.link->state << '\n';
    }
}

// One entry of a restore: what was put back (as set prints it), or why it was not.
void print_journal_report(const JournalReport& r) {
    if (r.action == JournalAction::Restored && r.applied) {
        print_report(*r.applied);
        if (!r.note.empty()) std::cout << "  " << r.note << '\n';
        return;
    }
    std::cout << where(r.ifname, r.where) << ": " << r.note << '\n';
}

std::string not_holding(const ApplyReport& r) {
    std::string out;
    for (const auto& c : r.features) {
        if (c.requested && c.outcome != SettingOutcome::Applied && c.outcome != SettingOutcome::AlreadySet) {
            out += (out.empty() ? "" : ", ") + c.name + "=" + on_off(*c.requested) +
                   (c.outcome == SettingOutcome::Fixed ? " (fixed)" : " (kernel kept it " + std::string(on_off(c.after)) + ")");
        }
    }
    if (r.mtu && r.mtu->outcome != SettingOutcome::Applied && r.mtu->outcome != SettingOutcome::AlreadySet) {
        out += (out.empty() ? "" : ", ") + std::string("mtu=") + std::to_string(r.mtu->requested);
    }
    return out;
}

struct DeviceOptions {
    std::string ifname;
    std::string netns;
    bool json = false;
    bool ioctl = false;
    std::optional<uint32_t> mtu;
    std::vector<std::string> features;
    std::string journal;
    std::string dir;
    bool force = false;
    bool forget = false;
    double link_wait_s = 10;
};

// IFACE, --netns and --ioctl: how show and set find the interface and talk to it.
void add_interface_flags(CLI::App* cmd, DeviceOptions& o) {
    cmd->add_option("IFACE", o.ifname, "Interface name")->required();
    cmd->add_option("--netns", o.netns, "Act inside this named network namespace (as `ip netns` lists it)");
    cmd->add_flag("--ioctl", o.ioctl, "Read and set features over the legacy SIOCETHTOOL ioctl instead of ethtool netlink");
}

void add_show_command(CLI::App& app, const std::shared_ptr<DeviceOptions>& opts) {
    auto* show = app.add_subcommand("show", "Driver, link, MTU with its range, and every offload feature (like ethtool -i -k)");
    add_interface_flags(show, *opts);
    show->add_flag("--json", opts->json, "Print as JSON: name, driver, ..., mtu_min, mtu_max, features{NAME: {active, wanted, fixed}}");
    show->callback([opts] {
        NetlinkDeviceControl device(opts->netns, {opts->ioctl});
        const LinkState state = device.read(opts->ifname);
        if (opts->json) {
            std::cout << show_json(state).dump(2, ' ', false, Json::error_handler_t::replace) << '\n';
        } else {
            print_show(state);
        }
    });
}

void set_command(const DeviceOptions& o) {
    LinkSettings wanted;
    wanted.mtu = o.mtu;
    for (const auto& arg : o.features) {
        const auto [name, on] = parse_feature_arg(arg);
        if (const auto it = wanted.features.find(name); it != wanted.features.end() && it->second != on) {
            throw usage_error("--feature " + name + " is given both on and off");
        }
        wanted.features[name] = on;
    }
    if (wanted.empty()) throw usage_error("set: nothing to change (give --mtu and/or --feature NAME=on|off)");
    NetlinkDeviceControl device(o.netns, {o.ioctl});
    device.validate(o.ifname, wanted);
    // The original goes to the journal before the first change, so `nicmatrix restore` can undo it;
    // an interface that another live nicmatrix holds is refused here, before anything changes.
    FileSettingsJournal journal(o.journal);
    journal.remember(device.read(o.ifname));
    // Journalled write by write: `nicmatrix restore` takes back what this wrote, and only where it holds.
    LinkWait link;
    link.bound = std::chrono::milliseconds(static_cast<int64_t>(o.link_wait_s * 1000));
    const ApplyReport report = apply_recorded(device, journal, o.ifname, wanted, nullptr, link).report;
    if (o.json) {
        std::cout << Json(report).dump(2, ' ', false, Json::error_handler_t::replace) << '\n';
    } else {
        print_report(report);
    }
    if (!report.all_requested_hold()) {
        throw Error(ErrorKind::Refused, "set: not every requested setting held: " + not_holding(report), {}, {where(o.ifname, o.netns), "", ""});
    }
    if (report.link && !report.link->back) {
        throw Error(ErrorKind::Failed,
                    "set: the link of " + where(o.ifname, o.netns) + " was not back " + Json(o.link_wait_s).dump() + " s after the change (" +
                        report.link->state + "); `nicmatrix restore` puts the interface back",
                    {}, {where(o.ifname, o.netns), "", ""});
    }
}

void add_set_command(CLI::App& app, const std::shared_ptr<DeviceOptions>& opts) {
    auto* set = app.add_subcommand("set", "Change MTU and offloads in one go, verify, and report each setting (like ethtool -K)");
    add_interface_flags(set, *opts);
    set->add_option("--mtu", opts->mtu, "New MTU in bytes; must be inside the device's min/max range");
    set->add_option("--feature", opts->features,
                    "NAME=on|off, repeatable. NAME: ethtool group (tx-checksumming, tcp-segmentation-offload, ...), "
                    "short alias (rx, tx, sg, tso, gso, gro, lro, ufo, ntuple, rxhash, rxvlan, txvlan) or kernel feature name");
    set->add_option("--journal", opts->journal,
                    "Restore journal file (default $NICMATRIX_JOURNAL or /run/nicmatrix/journal.json); an interface another "
                    "running nicmatrix holds there is refused (exit 1, naming its pid) before anything changes");
    set->add_option("--link-wait", opts->link_wait_s,
                    "Seconds to wait for the link (carrier and operstate up) after a change that dropped it, as a real NIC's "
                    "driver does on an MTU or ring change; 0 waits for nothing (default 10)")
        ->check(CLI::Range(0.0, 600.0));
    set->add_flag("--json", opts->json, "Print the apply report as JSON");
    set->footer(
        "Exit status: 0 every setting holds; 1 the system refused (a fixed feature, a setting the kernel did not keep, no "
        "CAP_NET_ADMIN, the interface held by another running nicmatrix); 2 bad input, nothing changed.");
    set->callback([opts] { set_command(*opts); });
}

void restore_command(const DeviceOptions& o) {
    const std::vector<std::string> paths = o.journal.empty() ? FileSettingsJournal::default_paths() : std::vector<std::string>{o.journal};
    Json all = Json::array();
    std::vector<std::string> kept_in;
    size_t count = 0;
    for (const auto& path : paths) {
        FileSettingsJournal journal(path);
        const auto reports = journal.restore(RestoreOptions{o.force, o.forget});
        count += reports.size();
        bool kept = false;
        for (const auto& r : reports) {
            kept = kept || r.action == JournalAction::Kept;
            if (o.json) {
                Json j = r;
                j["journal"] = path;
                all.push_back(std::move(j));
            } else {
                print_journal_report(r);
            }
        }
        if (kept) kept_in.push_back(path);
    }
    if (o.json) {
        std::cout << all.dump(2, ' ', false, Json::error_handler_t::replace) << '\n';
    } else if (count == 0) {
        std::string list;
        for (const auto& p : paths) list += (list.empty() ? "" : ", ") + p;
        std::cout << "nothing to restore (" << list << ")\n";
    }
    if (!kept_in.empty()) {
        std::string list;
        for (const auto& p : kept_in) list += (list.empty() ? "" : ", ") + p;
        throw Error(ErrorKind::Failed, "restore: some interfaces could not be restored; they stay in " + list +
                                           " (run restore again, or restore --forget to drop them)");
    }
}

void add_restore_command(CLI::App& app, const std::shared_ptr<DeviceOptions>& opts) {
    auto* restore = app.add_subcommand(
        "restore", "Put back the interfaces journalled by processes that are gone (after set, or a sweep or agent that was killed)");
    restore->add_option("--journal", opts->journal,
                        "Restore journal file (default: $NICMATRIX_JOURNAL or /run/nicmatrix/journal.json, and the agents' "
                        "/run/nicmatrix/agent*.json)");
    restore->add_flag("--json", opts->json, "Print one JSON object per entry: action, ifname, where, owner, note, applied");
    restore->add_flag("--force", opts->force,
                      "Also restore the entries of processes that still run (a sweep or agent you know is stuck); "
                      "without it they are listed with their pid and left alone");
    restore->add_flag("--forget", opts->forget,
                      "Remove the entries that cannot be restored now (interface not found, another interface in its place) "
                      "instead of keeping them for the next try");
    restore->footer(
        "Each entry names its owner (pid, start time, boot) and its interface by identity (namespace inode, ifindex, "
        "permanent address or bus info), so a restore from any namespace acts on the journalled interface, found again "
        "after a rename, never on a same-named one. Entries of a running process are left alone; a veth gone with its "
        "namespace or an entry from before a reboot is dropped with a note; a physical NIC whose namespace is gone is "
        "looked for in the initial namespace. Exit status: 0 nothing left that this restore could do; 1 some entry "
        "could not be restored and stays (try again, or --forget).");
    restore->callback([opts] { restore_command(*opts); });
}

void add_capture_command(CLI::App& app, const std::shared_ptr<DeviceOptions>& opts) {
    // Developer tool: writes real kernel replies as hex for the decoders' unit tests (tests/fixtures/).
    auto* capture = app.add_subcommand("capture-fixtures", "Write this kernel's netlink replies for IFACE as hex files (for tests)");
    capture->group("");
    capture->add_option("IFACE", opts->ifname, "Interface name")->required();
    capture->add_option("--netns", opts->netns, "Named network namespace");
    capture->add_option("--dir", opts->dir, "Output directory")->required();
    capture->callback([opts] {
        for (const auto& [name, bytes] : capture_replies(opts->netns, opts->ifname)) {
            const std::string path = opts->dir + "/" + name + ".hex";
            std::ofstream(path) << nl::to_hex(bytes);
            std::cout << "wrote " << path << '\n';
        }
    });
}

}  // namespace

void add_device_commands(CLI::App& app) {
    // One set of options for the four: only one subcommand runs.
    auto opts = std::make_shared<DeviceOptions>();
    add_show_command(app, opts);
    add_set_command(app, opts);
    add_restore_command(app, opts);
    add_capture_command(app, opts);
}

}  // namespace nm::cli

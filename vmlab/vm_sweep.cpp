#include "vmlab/vm_sweep.hpp"

#include <unistd.h>

#include <fstream>
#include <optional>
#include <sstream>

#include "core/base/atomic_file.hpp"
#include "core/base/error.hpp"
#include "ethtool_ctl/lab_codec.hpp"
#include "vmlab/vm_lab.hpp"

namespace nm {
namespace {

namespace fs = std::filesystem;

// The subnet an interface's IPv4 address is in: its hub ("198.18.1.2/24" -> "198.18.1.").
std::string hub_of(const LabInterface& i) { return i.ipv4.substr(0, i.ipv4.rfind('.') + 1); }

// The lab's interfaces for the two NICs, on one hub; none when the lab has no such pair.
std::optional<std::pair<LabInterface, LabInterface>> pick_pair(const LabInfo& lab, const NicModel& dut, const NicModel& peer) {
    for (const auto& a : lab.interfaces) {
        if (a.device_model != dut.device) continue;
        for (const auto& b : lab.interfaces) {
            if (&a != &b && b.device_model == peer.device && hub_of(a) == hub_of(b)) return std::pair{a, b};
        }
    }
    return std::nullopt;
}

// Ends a lab booted for one sweep, whatever way the sweep ends.
class BootedLab {
public:
    explicit BootedLab(std::string name) : name_(std::move(name)) {}
    ~BootedLab() {
        try {
            vm_lab_down(name_);
        } catch (...) {  // NOLINT(bugprone-empty-catch): its QEMU is tied to this process and dies with it anyway
        }
    }
    BootedLab(const BootedLab&) = delete;
    BootedLab& operator=(const BootedLab&) = delete;

private:
    std::string name_;
};

// Passes the output on as it comes (a cell's progress line has no newline until the cell ends), with the
// guest's path of the results file written as the host's; only a tail that may be the start of that path
// waits for the next chunk.
class PathRewriter {
public:
    PathRewriter(const OutputSink& sink, std::string from, std::string to) : sink_(sink), from_(std::move(from)), to_(std::move(to)) {}
    void operator()(std::string_view chunk) {
        pending_ += chunk;
        for (size_t p = pending_.find(from_); p != std::string::npos; p = pending_.find(from_, p + to_.size()))
            pending_.replace(p, from_.size(), to_);
        size_t keep = 0;
        for (size_t k = std::min(from_.size() - 1, pending_.size()); k > 0; --k) {
            if (pending_.compare(pending_.size() - k, k, from_, 0, k) == 0) {
                keep = k;
                break;
            }
        }
        if (pending_.size() > keep && sink_) sink_(pending_.substr(0, pending_.size() - keep));
        pending_.erase(0, pending_.size() - keep);
    }
    void flush() {
        if (!pending_.empty() && sink_) sink_(pending_);
        pending_.clear();
    }

private:
    const OutputSink& sink_;
    std::string from_, to_;
    std::string pending_;
};

void copy_file(const std::string& from, const fs::path& to, const std::string& flag) {
    std::ifstream in(from, std::ios::binary);
    if (!in) throw usage_error(flag + " " + from + ": cannot open");
    std::stringstream text;
    text << in.rdbuf();
    write_file_atomically(to.string(), text.str(), 0644);
}

}  // namespace

std::vector<NicModel> parse_vm_lab_spec(const std::string& spec) {
    if (spec.rfind("vm:", 0) != 0) throw usage_error("--lab " + spec + ": expected vm:DUT,PEER (e.g. vm:e1000e,8139cp) or no value (the veth lab)");
    auto nics = parse_nic_list(spec.substr(3), "--lab " + spec, 2);
    if (nics.size() != 2) throw usage_error("--lab " + spec + ": two NICs wanted, the device under test and its peer (e.g. vm:e1000e,8139cp)");
    return nics;
}

int run_vm_sweep(const VmSweepRequest& request, std::stop_token stop, const OutputSink& on_out, const OutputSink& on_err) {
    const auto nics = parse_vm_lab_spec(request.lab_spec);
    std::optional<LabInfo> lab;
    std::optional<std::pair<LabInterface, LabInterface>> ends;
    for (auto& running : vm_labs_running()) {
        if ((ends = pick_pair(running, nics[0], nics[1]))) {
            lab = std::move(running);
            if (on_err)
                on_err("nicmatrix: sweeping in the running VM lab " + lab->name + " (" + ends->first.ifname + " " + nics[0].device + " -> " +
                       ends->second.ifname + " " + nics[1].device + ")\n");
            break;
        }
    }
    std::optional<BootedLab> booted;
    if (!lab) {
        VmLabRequest boot;
        boot.name = request.lab_name.empty() ? "nmsweep" + std::to_string(::getpid()) : request.lab_name;
        boot.nics = nics;
        boot.lifetime = QemuLifetime::Tied;
        if (on_err) on_err("nicmatrix: booting a VM lab (" + nics[0].device + ", " + nics[1].device + ") for this sweep\n");
        lab = vm_lab_up(boot, stop);
        booted.emplace(lab->name);
        ends = pick_pair(*lab, nics[0], nics[1]);
    }

    // The sweep's files in the guest: its own folder of the share.
    const fs::path share = fs::path(lab->vm->state_dir) / "share";
    const std::string folder = "sweep-" + std::to_string(::getpid());
    const fs::path host_dir = share / folder;
    const std::string guest_dir = "/share/" + folder;
    fs::create_directories(host_dir);
    struct Cleanup {
        fs::path dir;
        ~Cleanup() {
            std::error_code ec;
            fs::remove_all(dir, ec);
        }
    } cleanup{host_dir};

    LabInfo pair = *lab;
    ends->first.role = "client";
    ends->second.role = "server";
    pair.interfaces = {ends->first, ends->second};
    pair.namespaces = {ends->first.netns, ends->second.netns};
    write_file_atomically((host_dir / "lab.json").string(), Json(pair).dump(2) + "\n", 0644);
    copy_file(request.config_file, host_dir / "config.json", "config");
    std::vector<std::string> argv = {
        "nicmatrix", "sweep", guest_dir + "/config.json", "--lab", "--lab-from", guest_dir + "/lab.json", "-o", guest_dir + "/results.json"};
    if (!request.resume.empty()) {
        copy_file(request.resume, host_dir / "results.json", "--resume");
        argv.insert(argv.end(), {"--resume", guest_dir + "/results.json"});
    }
    argv.insert(argv.end(), request.guest_flags.begin(), request.guest_flags.end());

    PathRewriter out(on_out, guest_dir + "/results.json", request.output);
    PathRewriter err(on_err, guest_dir + "/results.json", request.output);
    const GuestChannel channel = vm_lab_channel(*lab);
    // The guest's sweep restores its NICs before it ends; under emulation that takes a while.
    const auto r = channel.run(
        argv, std::nullopt, stop, [&](std::string_view c) { out(c); }, [&](std::string_view c) { err(c); }, std::chrono::minutes(3));
    out.flush();
    err.flush();

    // The results (also of an interrupted sweep: every finished cell) land on the host, said as run there.
    const fs::path results = host_dir / "results.json";
    if (fs::exists(results)) {
        std::ifstream in(results);
        Json doc = Json::parse(in);
        if (!request.command.empty() && doc.contains("run") && doc["run"].is_object()) doc["run"]["command"] = request.command;
        if (const auto parent = fs::path(request.output).parent_path(); !parent.empty()) fs::create_directories(parent);
        write_file_atomically(request.output, doc.dump(1, ' ', false, Json::error_handler_t::replace) + "\n", 0644);
    }
    return r.exit_code;
}

}  // namespace nm

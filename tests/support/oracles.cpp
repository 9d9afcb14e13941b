#include "tests/support/oracles.hpp"

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "core/base/wait_until.hpp"
#include "tests/support/command.hpp"

namespace nm::test {

std::map<std::string, bool> ethtool_features(const std::string& netns, const std::string& ifname) {
    const auto r = run_in_netns(netns, "ethtool -k " + ifname);
    if (r.exit_status != 0) throw std::runtime_error("ethtool -k " + ifname + " in " + netns + ": " + r.output);
    std::map<std::string, bool> features;
    std::istringstream in(r.output);
    std::string line;
    while (std::getline(in, line)) {
        const auto colon = line.find(':');
        if (colon == std::string::npos || line.rfind("Features for", 0) == 0) continue;
        const size_t start = line.find_first_not_of('\t');
        features[line.substr(start, colon - start)] = line.compare(colon + 2, 2, "on") == 0;
    }
    return features;
}

std::string link_mtu(const std::string& netns, const std::string& ifname) {
    return run_in_netns(netns, "cat /sys/class/net/" + ifname + "/mtu").output;
}

std::string ethtool_channels(const std::string& netns, const std::string& ifname) {
    const auto r = run_in_netns(netns, "ethtool -l " + ifname);
    std::istringstream in(r.output);
    std::string line, out;
    bool current = false;
    while (std::getline(in, line)) {
        if (line.rfind("Current hardware settings", 0) == 0) current = true;
        if (!current || !(line.rfind("RX:", 0) == 0 || line.rfind("TX:", 0) == 0)) continue;
        std::istringstream words(line);
        std::string name, value;
        words >> name >> value;
        out += (out.empty() ? "" : " ") + name + " " + value;
    }
    return out;
}

std::string rps_masks(const std::string& netns, const std::string& ifname) {
    // The glob expands inside the namespace (sh -c): the outer shell would expand it in the host's /sys.
    const auto r = run_in_netns(netns, "sh -c 'cat /sys/class/net/" + ifname + "/queues/rx-*/rps_cpus'");
    std::istringstream in(r.output);
    std::string mask, out;
    while (in >> mask) {
        // The kernel pads the mask to the possible CPUs and groups it by 32 bits ("00000000,00000003").
        mask.erase(std::remove(mask.begin(), mask.end(), ','), mask.end());
        const auto first = mask.find_first_not_of('0');
        mask = first == std::string::npos ? "0" : mask.substr(first);
        out += (out.empty() ? "" : " ") + mask;
    }
    return out;
}

std::string results_schema_errors(const std::string& path) {
    const std::string src = NM_SOURCE_DIR;
    const std::string script =
        "import json, sys, jsonschema\n"
        "src = sys.argv[1]\n"
        "load = lambda p: json.load(open(p))\n"
        "sweep = load(src + '/configs/sweep.schema.json'); results = load(src + '/results/results.schema.json')\n"
        "store = {sweep['\\$id']: sweep, results['\\$id']: results}\n"
        "resolver = jsonschema.RefResolver.from_schema(results, store=store)\n"
        "jsonschema.Draft202012Validator(results, resolver=resolver).validate(load(sys.argv[2]))\n";
    const auto r = run_command("/usr/bin/python3 -W ignore -c \"" + script + "\" " + src + " " + path);
    return r.exit_status == 0 ? std::string() : r.output;
}

void wait_for_lab_path(const LabInfo& lab) {
    const auto& client = lab.by_role("client");
    const std::string server = strip_prefix(lab.by_role("server").ipv4);
    wait_until([&] { return run_in_netns(client.netns, "ping -c1 -W1 " + server).exit_status == 0; }, std::chrono::seconds(5),
               "lab " + lab.name + ": a ping from " + client.netns + " to " + server);
}

uint64_t snmp_counter(const std::string& netns, const std::string& group, const std::string& field) {
    const auto r = run_in_netns(netns, "cat /proc/net/snmp");
    if (r.exit_status != 0) throw std::runtime_error("cat /proc/net/snmp in " + netns + ": " + r.output);
    std::istringstream in(r.output);
    std::string names, values;
    while (std::getline(in, names) && std::getline(in, values)) {  // a header line, then its values
        if (names.rfind(group + ":", 0) != 0) continue;
        std::istringstream n(names), v(values);
        std::string name, value;
        while (n >> name && v >> value) {
            if (name == field) return std::stoull(value);
        }
    }
    throw std::runtime_error("no " + group + " " + field + " in /proc/net/snmp of " + netns);
}

std::vector<std::string> netns_named(const std::string& prefix) {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/run/netns", ec)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind(prefix, 0) == 0) names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    return names;
}

}  // namespace nm::test

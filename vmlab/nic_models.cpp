#include "vmlab/nic_models.hpp"

#include <algorithm>
#include <cctype>

#include "core/base/error.hpp"

namespace nm {
namespace {

std::string canonical(std::string_view name) {
    std::string s;
    for (const char c : name) s += c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

}  // namespace

const std::vector<NicModel>& nic_models() {
    // rtl8139: Debian's kernel binds 8139cp (QEMU's model is a C+ chip), not 8139too.
    static const std::vector<NicModel> kModels = {
        {"e1000e", "e1000e"}, {"e1000", "e1000"}, {"rtl8139", "8139cp"}, {"vmxnet3", "vmxnet3"}, {"virtio-net-pci", "virtio_net"}, {"tulip", "tulip"},
    };
    return kModels;
}

std::vector<NicModel> parse_nic_list(std::string_view text, const std::string& flag, size_t at_least) {
    std::vector<NicModel> out;
    size_t pos = 0;
    while (pos <= text.size()) {
        const size_t comma = std::min(text.find(',', pos), text.size());
        const std::string name = canonical(text.substr(pos, comma - pos));
        pos = comma + 1;
        const auto& models = nic_models();
        const auto it = std::find_if(models.begin(), models.end(), [&](const NicModel& m) {
            return name == canonical(m.device) || name == canonical(m.driver) || (m.device == "virtio-net-pci" && name == "virtio-net");
        });
        if (it == models.end()) {
            std::string known;
            for (const auto& m : models) known += (known.empty() ? "" : ", ") + m.device + " (driver " + m.driver + ")";
            throw usage_error(flag + ": unknown NIC \"" + name + "\"; known QEMU devices: " + known);
        }
        out.push_back(*it);
    }
    if (out.size() < at_least) {
        throw usage_error(flag + ": " + std::to_string(out.size()) + " NIC given, at least " + std::to_string(at_least) +
                          " wanted (comma-separated, e.g. e1000e,8139cp)");
    }
    return out;
}

}  // namespace nm

#include "core/rfc2544/frame_size.hpp"

#include <numeric>

#include "core/base/error.hpp"

namespace nm {
namespace {

constexpr uint32_t kMaxUdpPayloadBytes = 65507;  // 65535 - 20 IPv4 - 8 UDP

double total_weight(const FrameMix& mix) {
    return std::accumulate(mix.shares.begin(), mix.shares.end(), 0.0, [](double sum, const FrameShare& s) { return sum + s.weight; });
}

double weighted_mean(const FrameMix& mix, uint32_t extra_bytes) {
    const double weight = total_weight(mix);
    if (weight <= 0) throw usage_error("frame mix " + mix.name + " has no frames");
    double bytes = 0;
    for (const auto& s : mix.shares) bytes += static_cast<double>(s.weight) * (s.frame_bytes + extra_bytes);
    return bytes / weight;
}

uint32_t parse_uint(const std::string& text, const std::string& what) {
    size_t used = 0;
    unsigned long value = 0;
    try {
        value = std::stoul(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != text.size() || value > 0xffffffffUL) {
        throw usage_error(what + ": expected a number, got \"" + text + "\"");
    }
    return static_cast<uint32_t>(value);
}

}  // namespace

uint32_t udp_payload_for_frame(uint32_t frame_bytes) {
    const uint32_t overhead = kEthernetOverheadBytes + kIpv4UdpHeaderBytes;
    if (frame_bytes < kMinFrameBytes || frame_bytes - overhead > kMaxUdpPayloadBytes) {
        throw usage_error("frame size " + std::to_string(frame_bytes) + ": must be between 64 and " + std::to_string(kMaxUdpPayloadBytes + overhead) +
                          " bytes");
    }
    return frame_bytes - overhead;
}

uint32_t frame_for_udp_payload(uint32_t payload_bytes) { return payload_bytes + kEthernetOverheadBytes + kIpv4UdpHeaderBytes; }

double FrameMix::mean_frame_bytes() const { return weighted_mean(*this, 0); }

FrameMix classic_imix() { return {"imix", {{64, 7}, {594, 4}, {1518, 1}}}; }

FrameMix single_frame(uint32_t frame_bytes) {
    udp_payload_for_frame(frame_bytes);  // validates
    return {std::to_string(frame_bytes), {{frame_bytes, 1}}};
}

std::vector<FrameMix> default_frame_sizes() {
    std::vector<FrameMix> sizes;
    for (uint32_t f : {64U, 128U, 256U, 512U, 1024U, 1280U, 1518U}) sizes.push_back(single_frame(f));
    sizes.push_back(classic_imix());
    return sizes;
}

FrameMix parse_frame_size(const std::string& text) {
    if (text == "imix") return classic_imix();
    if (text.rfind("imix:", 0) == 0) {
        // imix:64x7,594x4,1518x1
        FrameMix mix{text, {}};
        size_t pos = 5;
        while (pos <= text.size()) {
            const size_t comma = text.find(',', pos);
            const std::string part = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
            const size_t x = part.find('x');
            if (x == std::string::npos) throw usage_error("frame mix \"" + text + "\": expected SIZExWEIGHT, got \"" + part + "\"");
            const uint32_t frame = parse_uint(part.substr(0, x), "frame mix \"" + text + "\" size");
            udp_payload_for_frame(frame);
            mix.shares.push_back({frame, parse_uint(part.substr(x + 1), "frame mix \"" + text + "\" weight")});
            if (comma == std::string::npos) break;
            pos = comma + 1;
        }
        if (total_weight(mix) <= 0) throw usage_error("frame mix \"" + text + "\" has no frames");
        return mix;
    }
    return single_frame(parse_uint(text, "frame size"));
}

double line_rate_fps(double speed_bps, const FrameMix& mix) {
    if (speed_bps <= 0) throw usage_error("line rate: link speed must be positive");
    return speed_bps / (weighted_mean(mix, kWireGapBytes) * 8.0);
}

double layer2_bps(double fps, const FrameMix& mix) { return fps * mix.mean_frame_bytes() * 8.0; }

}  // namespace nm

#pragma once
// Ethernet frame arithmetic for RFC 2544 tables. A frame counts the Ethernet header and FCS; on the wire
// each frame also costs 8 bytes of preamble/SFD and a 12-byte inter-frame gap.
#include <cstdint>
#include <string>
#include <vector>

namespace nm {

inline constexpr uint32_t kEthernetOverheadBytes = 18;  ///< 14 header + 4 FCS, counted in the frame
inline constexpr uint32_t kWireGapBytes = 20;           ///< preamble + SFD + inter-frame gap, not counted
inline constexpr uint32_t kIpv4UdpHeaderBytes = 28;     ///< 20 IPv4 + 8 UDP
inline constexpr uint32_t kMinFrameBytes = 64;
inline constexpr uint32_t kMaxStandardFrameBytes = 1518;

/// UDP payload that makes an IPv4 frame of `frame_bytes` (frame - 46). Throws nm::Error (Usage) below
/// 64 bytes, or above what an IPv4 UDP datagram can carry.
uint32_t udp_payload_for_frame(uint32_t frame_bytes);

/// Frame size of an IPv4 UDP datagram with `payload_bytes` (payload + 46).
uint32_t frame_for_udp_payload(uint32_t payload_bytes);

/// One share of a frame-size mix: `weight` frames of `frame_bytes` in every sum(weights).
struct FrameShare {
    uint32_t frame_bytes = 0;
    uint32_t weight = 0;
};

/// A frame size or a mix of them. A single size is a mix of one.
struct FrameMix {
    std::string name;  ///< "64", "1518", "imix"
    std::vector<FrameShare> shares;

    /// Weighted mean frame size, bytes.
    double mean_frame_bytes() const;
    bool is_mix() const { return shares.size() > 1; }
};

/// The classic simple IMIX: 64, 594 and 1518 bytes at 7:4:1.
FrameMix classic_imix();

/// A single frame size as a mix.
FrameMix single_frame(uint32_t frame_bytes);

/// RFC 2544's frame sizes for Ethernet (64, 128, 256, 512, 1024, 1280, 1518) followed by IMIX.
std::vector<FrameMix> default_frame_sizes();

/// Parses "64", "1518" or "imix" (and "imix:64x7,594x4,1518x1" for a custom mix). Throws nm::Error
/// (Usage) naming the text.
FrameMix parse_frame_size(const std::string& text);

/// Frames per second at line rate: speed_bps / ((frame + 20) * 8), with the mix's weighted wire size.
double line_rate_fps(double speed_bps, const FrameMix& mix);

/// Layer-2 bits per second of `fps` frames of the mix (frame bytes x 8, no preamble or gap).
double layer2_bps(double fps, const FrameMix& mix);

}  // namespace nm

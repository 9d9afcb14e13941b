#pragma once
// The TCP sender's default write size: whole send units, so that no write leaves a runt behind it.
//
// tcp_sendmsg cuts what a write hands it into skbs of its size goal (tcp_xmit_size_goal: the MSS times
// the segments a GSO packet of the socket's gso_max_size holds, less MAX_TCP_HEADER + 1; one MSS without
// GSO). A write that is not a whole number of those units leaves a short skb at its end. When the send
// queue runs dry before the next write fills it (the sender's CPU is the limit), that skb leaves alone:
// a sub-MSS segment with offloads off, a GSO packet of one or two segments with them on. iperf3's and
// iperf 2's 128 KiB and nuttcp's 64 KiB are powers of two, never a multiple of an MSS of 1448 or 8948.
//
// On the veth lab those runts made the flow reorder and retransmit 5 to 10 times as often and cost a third
// to a half of the throughput with BBR (the figures and how they were measured: README, "Whole-segment
// writes"). Avoiding them costs a few percent more send() calls than 128 KiB writes (125272 is 4% less).
#include <cstdint>

namespace nm {

/// The GSO packet size the kernel's size goal assumes here: GSO_LEGACY_MAX_SIZE, every device's default
/// gso_max_size (BIG TCP raises it; a larger goal then takes a whole write as one skb, no runt either).
inline constexpr uint32_t kLegacyGsoMaxBytes = 65536;
/// MAX_TCP_HEADER on x86-64 distribution kernels (L1_CACHE_ALIGN(128 + MAX_HEADER)); the kernel takes it
/// and one byte off gso_max_size before dividing by the MSS.
inline constexpr uint32_t kMaxTcpHeaderBytes = 320;

/// TCP's send unit for `mss`: the MSS times the whole segments that fit in a legacy GSO packet (at least
/// one). A whole number of units is also a whole number of segments, which is all that matters without
/// GSO. 0 when `mss` is 0.
uint32_t tcp_send_unit(uint32_t mss);

/// The largest whole number of send units of `mss` that fits in `at_most` bytes; the largest whole
/// number of segments when not even one unit fits; `at_most` when not one segment fits or `mss` is
/// unknown (0). Pure.
uint32_t whole_unit_write_size(uint32_t mss, uint32_t at_most);

}  // namespace nm

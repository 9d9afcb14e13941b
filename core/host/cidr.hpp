#pragma once
// Address blocks for `serve --allow-from`: "198.18.0.0/15", "2001:2::/48", or one address.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/host/net.hpp"

namespace nm {

/// One IPv4 or IPv6 address block.
class Cidr {
public:
    /// "ADDRESS/PREFIX" or "ADDRESS" (a /32 or /128). Bits past the prefix are ignored, as iptables does.
    /// Throws nm::Error (Usage) naming the text: "--allow-from 10.0.0.0/33: prefix length must be 0..32".
    static Cidr parse(const std::string& text);

    /// True when `address` is in the block. An IPv4-mapped IPv6 address (::ffff:198.18.0.1, how a
    /// dual-stack listener sees IPv4 clients) is the IPv4 address it maps.
    bool contains(const SocketAddress& address) const;

    /// The block as given.
    const std::string& text() const { return text_; }

private:
    bool v6_ = false;
    std::array<uint8_t, 16> bytes_{};
    unsigned prefix_ = 0;
    std::string text_;
};

/// True when `address` is in one of `blocks`; an empty list allows every address.
bool allowed_by(const std::vector<Cidr>& blocks, const SocketAddress& address);

/// The source a connection from `address` counts against for serve's per-source caps: an IPv4 address
/// (or IPv4-mapped IPv6 address) is itself ("198.18.0.1"); an IPv6 address is its block of
/// `ipv6_prefix` bits (0..128), since one host usually holds a whole /64 and can pick any address in it
/// ("2001:2::/64"). An address of another family gives its host text.
std::string source_group(const SocketAddress& address, unsigned ipv6_prefix);

}  // namespace nm

#include "core/host/cidr.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>

#include "core/base/error.hpp"

namespace nm {

Cidr Cidr::parse(const std::string& text) {
    Cidr c;
    c.text_ = text;
    const auto slash = text.find('/');
    const std::string host = text.substr(0, slash);
    if (::inet_pton(AF_INET, host.c_str(), c.bytes_.data()) == 1) {
        c.v6_ = false;
    } else if (::inet_pton(AF_INET6, host.c_str(), c.bytes_.data()) == 1) {
        c.v6_ = true;
    } else {
        throw usage_error("--allow-from " + text + ": not an IPv4 or IPv6 address (give ADDRESS or ADDRESS/PREFIX)");
    }
    const unsigned bits = c.v6_ ? 128 : 32;
    c.prefix_ = bits;
    if (slash != std::string::npos) {
        const std::string p = text.substr(slash + 1);
        const bool digits = !p.empty() && p.size() <= 3 && std::all_of(p.begin(), p.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
        if (!digits || std::stoul(p) > bits) {
            throw usage_error("--allow-from " + text + ": prefix length must be 0.." + std::to_string(bits));
        }
        c.prefix_ = static_cast<unsigned>(std::stoul(p));
    }
    return c;
}

bool Cidr::contains(const SocketAddress& address) const {
    bool v6 = false;
    std::array<uint8_t, 16> a{};
    if (!host_bytes(address.storage, v6, a) || v6 != v6_) return false;
    const unsigned whole = prefix_ / 8;
    if (std::memcmp(a.data(), bytes_.data(), whole) != 0) return false;
    const unsigned rest = prefix_ % 8;
    if (rest == 0) return true;
    const auto mask = static_cast<uint8_t>(0xff << (8 - rest));
    return (a[whole] & mask) == (bytes_[whole] & mask);
}

bool allowed_by(const std::vector<Cidr>& blocks, const SocketAddress& address) {
    return blocks.empty() || std::any_of(blocks.begin(), blocks.end(), [&](const Cidr& c) { return c.contains(address); });
}

std::string source_group(const SocketAddress& address, unsigned ipv6_prefix) {
    bool v6 = false;
    std::array<uint8_t, 16> a{};
    if (!host_bytes(address.storage, v6, a) || !v6) return address.host();
    const unsigned prefix = std::min(ipv6_prefix, 128u);
    for (unsigned bit = prefix; bit < 128; ++bit) a[bit / 8] = static_cast<uint8_t>(a[bit / 8] & ~(0x80u >> (bit % 8)));
    char buf[INET6_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET6, a.data(), buf, sizeof buf);
    return std::string(buf) + "/" + std::to_string(prefix);
}

}  // namespace nm

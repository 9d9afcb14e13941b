#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/error.hpp"
#include "ethtool_ctl/rtnl_link_info.hpp"

struct nl_sock;
struct rtnl_link;

namespace nm {

/// An rtnetlink socket (libnl-route-3) opened inside one network namespace; every call acts there.
/// Move-only; the constructor either connects or throws nm::Error.
class RtnlSocket {
public:
    /// Opens the socket in `netns` ("" = the caller's namespace).
    static RtnlSocket open(std::string_view netns = {});

    nl_sock* get() const noexcept { return sock_.get(); }
    const std::string& netns() const noexcept { return netns_; }

    /// Interface index of `ifname`; throws nm::Error (Usage) naming the interface and namespace if absent.
    int link_index(std::string_view ifname) const;

    /// The kernel's current view of `ifname` (caller owns nothing; the pointer is reference-counted).
    std::unique_ptr<rtnl_link, void (*)(rtnl_link*)> fetch_link(std::string_view ifname) const;

    /// Brings `ifname` administratively up.
    void set_up(std::string_view ifname) const;

    /// Adds an address given as "198.18.0.1/24" or "2001:2::1/64"; IPv6 addresses skip duplicate
    /// address detection so they are usable at once.
    void add_address(std::string_view ifname, std::string_view cidr) const;

    /// Creates a veth pair: `name` in the namespace of `netns_fd`, `peer_name` in that of `peer_netns_fd`.
    void create_veth(std::string_view name, int netns_fd, std::string_view peer_name, int peer_netns_fd) const;

    /// Creates a Linux bridge `name` in this socket's namespace.
    void create_bridge(std::string_view name) const;

    /// Makes `ifname` a port of `master`.
    void set_master(std::string_view ifname, std::string_view master) const;

    /// MTU with its device range (IFLA_MIN_MTU/IFLA_MAX_MTU, read from the raw RTM_NEWLINK because
    /// libnl-route has no accessor for them), operstate and stats64. Throws nm::Error (Usage) naming the
    /// interface and namespace if absent. `tap`, when set, sees the raw reply (fixture capture).
    RtnlLinkInfo link_info(std::string_view ifname, const std::function<void(nl::Bytes)>& tap = {}) const;

    /// Every link in this socket's namespace (one RTM_GETLINK dump), decoded like link_info().
    std::vector<RtnlLinkInfo> list_links() const;

    /// Sets the MTU (no range check here; DeviceControl checks before changing anything). Throws
    /// nm::Error with the errno, naming the interface and "mtu".
    void set_mtu(std::string_view ifname, uint32_t mtu) const;

private:
    struct SockDeleter {
        void operator()(nl_sock* s) const noexcept;
    };
    RtnlSocket(std::unique_ptr<nl_sock, SockDeleter> sock, std::string netns);

    std::unique_ptr<nl_sock, SockDeleter> sock_;
    std::string netns_;
};

/// An nm::Error from a libnl return code (a negative NLE_* value), with the nearest errno for the code.
[[nodiscard]] Error libnl_error(std::string action, int nle, ErrorContext context = {});

}  // namespace nm

#include "ethtool_ctl/rtnl_socket.hpp"

#include <linux/if_addr.h>
#include <net/if.h>
#include <netlink/errno.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/link/bridge.h>
#include <netlink/route/link/veth.h>

#include <cerrno>
#include <vector>

#include "ethtool_ctl/netns.hpp"

namespace nm {
namespace {

using LinkPtr = std::unique_ptr<rtnl_link, void (*)(rtnl_link*)>;

LinkPtr make_link(rtnl_link* link) { return LinkPtr(link, rtnl_link_put); }

// libnl folds errno values into its own NLE_* codes; map back the ones a user can act on.
int errno_of(int nle) {
    switch (-nle) {
        case NLE_EXIST: return EEXIST;
        case NLE_OBJ_NOTFOUND:
        case NLE_NODEV: return ENODEV;
        case NLE_PERM: return EPERM;
        case NLE_NOACCESS: return EACCES;
        case NLE_INVAL: return EINVAL;
        case NLE_BUSY: return EBUSY;
        case NLE_RANGE: return ERANGE;
        case NLE_OPNOTSUPP: return EOPNOTSUPP;
        case NLE_AF_NOSUPPORT: return EAFNOSUPPORT;
        case NLE_NOMEM: return ENOMEM;
        case NLE_AGAIN: return EAGAIN;
        default: return EIO;
    }
}

std::string where(std::string_view ifname, const std::string& netns) {
    return netns.empty() ? std::string(ifname) : std::string(ifname) + " (netns " + netns + ")";
}

}  // namespace

Error libnl_error(std::string action, int nle, ErrorContext context) {
    const int errnum = errno_of(nle);
    const auto kind = (errnum == EPERM || errnum == EACCES) ? ErrorKind::Refused : ErrorKind::Failed;
    return Error(kind, std::move(action), std::error_code(errnum, std::generic_category()), std::move(context));
}

void RtnlSocket::SockDeleter::operator()(nl_sock* s) const noexcept { nl_socket_free(s); }

RtnlSocket::RtnlSocket(std::unique_ptr<nl_sock, SockDeleter> sock, std::string netns) : sock_(std::move(sock)), netns_(std::move(netns)) {}

RtnlSocket RtnlSocket::open(std::string_view netns) {
    NetnsScope scope(netns);
    std::unique_ptr<nl_sock, SockDeleter> sock(nl_socket_alloc());
    if (!sock) throw Error(ErrorKind::Failed, "allocate an rtnetlink socket", std::make_error_code(std::errc::not_enough_memory));
    if (const int err = nl_connect(sock.get(), NETLINK_ROUTE); err < 0) {
        throw libnl_error("connect rtnetlink" + (netns.empty() ? std::string() : " in netns " + std::string(netns)), err);
    }
    return RtnlSocket(std::move(sock), std::string(netns));
}

int RtnlSocket::link_index(std::string_view ifname) const { return rtnl_link_get_ifindex(fetch_link(ifname).get()); }

LinkPtr RtnlSocket::fetch_link(std::string_view ifname) const {
    if (ifname.empty() || ifname.size() >= IFNAMSIZ) {
        throw usage_error("interface name \"" + std::string(ifname) + "\" is not valid (1 to 15 characters)");
    }
    rtnl_link* link = nullptr;
    const std::string name(ifname);
    if (const int err = rtnl_link_get_kernel(sock_.get(), 0, name.c_str(), &link); err < 0) {
        if (err == -NLE_OBJ_NOTFOUND || err == -NLE_NODEV) {
            throw Error(ErrorKind::Usage, "no such interface: " + where(ifname, netns_));
        }
        throw libnl_error("read link", err, {where(ifname, netns_), "", ""});
    }
    return make_link(link);
}

void RtnlSocket::set_up(std::string_view ifname) const {
    auto current = fetch_link(ifname);
    auto change = make_link(rtnl_link_alloc());
    rtnl_link_set_flags(change.get(), IFF_UP);
    if (const int err = rtnl_link_change(sock_.get(), current.get(), change.get(), 0); err < 0) {
        throw libnl_error("set link up", err, {where(ifname, netns_), "state", ""});
    }
}

void RtnlSocket::add_address(std::string_view ifname, std::string_view cidr) const {
    const int index = link_index(ifname);
    nl_addr* parsed = nullptr;
    const std::string text(cidr);
    const int family = text.find(':') != std::string::npos ? AF_INET6 : AF_INET;
    if (const int err = nl_addr_parse(text.c_str(), family, &parsed); err < 0) {
        throw usage_error("address \"" + text + "\" is not a valid " + (family == AF_INET ? "IPv4" : "IPv6") + " prefix");
    }
    std::unique_ptr<nl_addr, void (*)(nl_addr*)> local(parsed, nl_addr_put);
    std::unique_ptr<rtnl_addr, void (*)(rtnl_addr*)> addr(rtnl_addr_alloc(), rtnl_addr_put);
    rtnl_addr_set_ifindex(addr.get(), index);
    rtnl_addr_set_local(addr.get(), local.get());
    if (family == AF_INET6) rtnl_addr_set_flags(addr.get(), IFA_F_NODAD);
    if (const int err = rtnl_addr_add(sock_.get(), addr.get(), NLM_F_EXCL); err < 0) {
        throw libnl_error("add address " + text, err, {where(ifname, netns_), "address", ""});
    }
}

namespace {
constexpr uint32_t kVethQueues = 2;
}  // namespace

void RtnlSocket::create_veth(std::string_view name, int netns_fd, std::string_view peer_name, int peer_netns_fd) const {
    auto link = make_link(rtnl_link_veth_alloc());
    if (!link) throw Error(ErrorKind::Failed, "allocate a veth link", std::make_error_code(std::errc::not_enough_memory));
    auto peer = make_link(rtnl_link_veth_get_peer(link.get()));
    rtnl_link_set_name(link.get(), std::string(name).c_str());
    rtnl_link_set_name(peer.get(), std::string(peer_name).c_str());
    // IFLA_NET_NS_FD on both ends creates each directly in its namespace, so the names never touch the
    // caller's namespace (and cannot clash with the host's interfaces).
    rtnl_link_set_ns_fd(link.get(), netns_fd);
    rtnl_link_set_ns_fd(peer.get(), peer_netns_fd);
    // Two queues each way, so the lab can sweep channels 1 and 2 (`ethtool -L rx N tx N`) and XPS, which
    // sysfs offers only on a multiqueue device.
    for (rtnl_link* l : {link.get(), peer.get()}) {
        rtnl_link_set_num_tx_queues(l, kVethQueues);
        rtnl_link_set_num_rx_queues(l, kVethQueues);
    }
    if (const int err = rtnl_link_add(sock_.get(), link.get(), NLM_F_CREATE | NLM_F_EXCL); err < 0) {
        throw libnl_error("create veth pair " + std::string(name) + "/" + std::string(peer_name), err);
    }
}

void RtnlSocket::create_bridge(std::string_view name) const {
    if (const int err = rtnl_link_bridge_add(sock_.get(), std::string(name).c_str()); err < 0) {
        throw libnl_error("create bridge", err, {where(name, netns_), "", ""});
    }
}

void RtnlSocket::set_master(std::string_view ifname, std::string_view master) const {
    auto current = fetch_link(ifname);
    auto change = make_link(rtnl_link_alloc());
    rtnl_link_set_master(change.get(), link_index(master));
    if (const int err = rtnl_link_change(sock_.get(), current.get(), change.get(), 0); err < 0) {
        throw libnl_error("attach to bridge " + std::string(master), err, {where(ifname, netns_), "master", ""});
    }
}

namespace {

// Keeps the raw bytes of every RTM_NEWLINK of a dump (decoded afterwards: nothing may throw through libnl).
int collect_link(nl_msg* msg, void* arg) {
    const nlmsghdr* hdr = nlmsg_hdr(msg);
    auto* raw = static_cast<std::vector<std::vector<uint8_t>>*>(arg);
    const auto* bytes = reinterpret_cast<const uint8_t*>(hdr);
    if (hdr->nlmsg_type == RTM_NEWLINK) raw->emplace_back(bytes, bytes + hdr->nlmsg_len);
    return NL_OK;
}

// Copies the raw bytes of the RTM_NEWLINK reply out of libnl's receive path.
int keep_raw(nl_msg* msg, void* arg) {
    const nlmsghdr* hdr = nlmsg_hdr(msg);
    auto* raw = static_cast<std::vector<uint8_t>*>(arg);
    const auto* bytes = reinterpret_cast<const uint8_t*>(hdr);
    raw->assign(bytes, bytes + hdr->nlmsg_len);
    return NL_OK;
}

}  // namespace

RtnlLinkInfo RtnlSocket::link_info(std::string_view ifname, const std::function<void(nl::Bytes)>& tap) const {
    if (ifname.empty() || ifname.size() >= IFNAMSIZ) {
        throw usage_error("interface name \"" + std::string(ifname) + "\" is not valid (1 to 15 characters)");
    }
    nl_msg* request = nullptr;
    if (const int err = rtnl_link_build_get_request(0, std::string(ifname).c_str(), &request); err < 0) {
        throw libnl_error("build link request", err, {where(ifname, netns_), "", ""});
    }
    std::unique_ptr<nl_msg, void (*)(nl_msg*)> owned(request, nlmsg_free);
    if (const int err = nl_send_auto(sock_.get(), request); err < 0) {
        throw libnl_error("send link request", err, {where(ifname, netns_), "", ""});
    }
    std::vector<uint8_t> raw;
    std::unique_ptr<nl_cb, void (*)(nl_cb*)> cb(nl_cb_clone(nl_socket_get_cb(sock_.get())), nl_cb_put);
    nl_cb_set(cb.get(), NL_CB_VALID, NL_CB_CUSTOM, keep_raw, &raw);
    if (const int err = nl_recvmsgs(sock_.get(), cb.get()); err < 0) {
        if (err == -NLE_OBJ_NOTFOUND || err == -NLE_NODEV) {
            throw Error(ErrorKind::Usage, "no such interface: " + where(ifname, netns_));
        }
        throw libnl_error("read link", err, {where(ifname, netns_), "", ""});
    }
    // libnl asks for an ack on every request; take it off the socket so the next request starts clean.
    if (const int err = nl_wait_for_ack(sock_.get()); err < 0) {
        throw libnl_error("read link", err, {where(ifname, netns_), "", ""});
    }
    if (raw.empty())
        throw Error(ErrorKind::Failed, "read link: no reply", std::make_error_code(std::errc::bad_message), {where(ifname, netns_), "", ""});
    if (tap) tap(raw);
    return decode_link_message(raw);
}

std::vector<RtnlLinkInfo> RtnlSocket::list_links() const {
    ifinfomsg request{};
    request.ifi_family = AF_UNSPEC;
    if (const int err = nl_send_simple(sock_.get(), RTM_GETLINK, NLM_F_DUMP, &request, sizeof request); err < 0) {
        throw libnl_error("list links" + (netns_.empty() ? std::string() : " in netns " + netns_), err);
    }
    std::vector<std::vector<uint8_t>> raw;
    std::unique_ptr<nl_cb, void (*)(nl_cb*)> cb(nl_cb_clone(nl_socket_get_cb(sock_.get())), nl_cb_put);
    nl_cb_set(cb.get(), NL_CB_VALID, NL_CB_CUSTOM, collect_link, &raw);
    if (const int err = nl_recvmsgs(sock_.get(), cb.get()); err < 0) {
        throw libnl_error("list links" + (netns_.empty() ? std::string() : " in netns " + netns_), err);
    }
    std::vector<RtnlLinkInfo> links;
    links.reserve(raw.size());
    for (const auto& message : raw) links.push_back(decode_link_message(message));
    return links;
}

void RtnlSocket::set_mtu(std::string_view ifname, uint32_t mtu) const {
    auto current = fetch_link(ifname);
    auto change = make_link(rtnl_link_alloc());
    rtnl_link_set_mtu(change.get(), mtu);
    if (const int err = rtnl_link_change(sock_.get(), current.get(), change.get(), 0); err < 0) {
        throw libnl_error("set mtu=" + std::to_string(mtu), err, {where(ifname, netns_), "mtu", ""});
    }
}

}  // namespace nm

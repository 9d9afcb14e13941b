#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/unique_fd.hpp"

namespace nm {

/// Named network namespaces, kept the way `ip netns` keeps them: a bind mount of the namespace on
/// /run/netns/NAME, so `ip netns exec NAME ...` and nicmatrix see the same ones.

/// Rejects names `ip netns` would not accept; throws nm::Error (Usage) naming the field.
void validate_netns_name(std::string_view name);

bool netns_exists(std::string_view name);
std::vector<std::string> list_netns();

/// Creates NAME with its own fresh network namespace. Throws nm::Error (Usage) if it exists already.
void create_netns(std::string_view name);

/// Deletes NAME; returns false when there was nothing to delete. Interfaces inside go with it.
bool delete_netns(std::string_view name);

/// An open handle on the namespace NAME (for setns or IFLA_NET_NS_FD). NAME may also be the absolute
/// path of a namespace file (/proc/PID/ns/net), which is how a namespace without a name is reached.
/// Throws nm::Error (Usage) naming the namespace when it does not exist.
UniqueFd open_netns(std::string_view name);

/// A network namespace's identity: the device and inode of its nsfs file. Names are only bind mounts
/// under /run/netns (and a `""` means whichever namespace the reader is in); this is the namespace.
struct NetnsId {
    uint64_t dev = 0;
    uint64_t ino = 0;
    bool operator==(const NetnsId& o) const { return dev == o.dev && ino == o.ino; }
};

/// The identity of the calling thread's namespace. Throws nm::Error when /proc is not there.
NetnsId current_netns_id();

/// The identity of the namespace socket `fd` lives in (SIOCGSKNS): exactly where a socket acts, whatever
/// name or path was used to get there. None when the kernel refuses (SIOCGSKNS needs CAP_NET_ADMIN).
std::optional<NetnsId> socket_netns_id(int fd);

/// The identity of the namespace file at `path` (/run/netns/NAME, /proc/PID/ns/net); none when it cannot
/// be read (gone, or not ours to look at).
std::optional<NetnsId> netns_id_of(const std::string& path);

/// Where the namespace `id` can be entered, for open_netns/NetnsScope: "" when it is the calling thread's
/// own, its name under /run/netns, or /proc/PID/ns/net of a process that lives in it; none when neither
/// a name nor a process holds it any more (the namespace is gone). The caller must check the identity
/// again after opening it: a process can exit, and its pid be reused, in between.
std::optional<std::string> find_netns(NetnsId id);

/// The name of namespace `id` under /run/netns, "" when it has none.
std::string netns_name_of(NetnsId id);

/// Moves the calling thread into a namespace for the lifetime of this object and back afterwards. A
/// socket opened meanwhile stays in that namespace for good, which is how every layer reaches a lab end.
/// An empty name means "stay where you are". Network namespaces are per thread, so other threads of the
/// process are not affected.
class NetnsScope {
public:
    explicit NetnsScope(std::string_view name);
    ~NetnsScope();
    NetnsScope(const NetnsScope&) = delete;
    NetnsScope& operator=(const NetnsScope&) = delete;

private:
    UniqueFd original_;
};

}  // namespace nm

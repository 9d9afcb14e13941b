#pragma once
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

/// An open handle on the namespace NAME (for setns or IFLA_NET_NS_FD). Throws nm::Error (Usage) naming
/// the namespace when it does not exist.
UniqueFd open_netns(std::string_view name);

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

#pragma once
// The whole qdisc tree of an interface (qdiscs, classes, filters) over rtnetlink: read by
// QdiscControl::tree, rebuilt by QdiscControl::rebuild (ethtool_ctl/qdisc.hpp). The decoder is split from
// the socket so captured dumps can be decoded in tests.
#include <cstdint>
#include <vector>

#include "core/device/qdisc_tree.hpp"

namespace nm {

/// The tree of `ifindex` from the messages of an RTM_GETQDISC dump, an RTM_GETTCLASS dump and the
/// RTM_GETTFILTER dumps of every qdisc and class (whole netlink messages). Messages of other devices and
/// the ingress/clsact qdisc with its filters are left out; kernel-made classes (mq's queues) too. Where a
/// node cannot be rebuilt exactly, `refused` names it (the first one) and the tree still lists the rest.
/// Throws nm::Error (Failed) on a malformed message.
QdiscTree decode_qdisc_tree(const std::vector<std::vector<uint8_t>>& qdiscs, const std::vector<std::vector<uint8_t>>& classes,
                            const std::vector<std::vector<uint8_t>>& filters, int32_t ifindex);

}  // namespace nm

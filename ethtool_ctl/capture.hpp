#pragma once
// Captures real kernel replies as test fixtures (tests/fixtures/*.hex): the decoders' unit tests then
// run on what this kernel actually sends, without root.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace nm {

/// Sends the read requests nicmatrix uses (string set, features compact and verbose, link modes,
/// channels, the rtnetlink link) and one features change there and back (`tx` off, then the original),
/// in `netns` on `ifname`, and returns each reply's bytes by a descriptive name ("features_get_compact",
/// "features_set_reply_tx_off", ...). Changes the interface only transiently. Throws nm::Error.
std::map<std::string, std::vector<uint8_t>> capture_replies(std::string_view netns, std::string_view ifname);

}  // namespace nm

#include "ethtool_ctl/ethtool_netlink.hpp"

#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/base/error.hpp"

namespace nm {
namespace {

using nl::AttrPolicy;
using nl::AttrType;
using nl::Bytes;

Error malformed(const std::string& what) {
    return Error(ErrorKind::Failed, "decode " + what + " from the kernel", std::make_error_code(std::errc::bad_message));
}

// Compact bitsets are arrays of host-order u32 words, bit i in word i / 32.
std::vector<bool> words_to_bits(Bytes words, size_t size) {
    std::vector<bool> bits(size, false);
    for (size_t i = 0; i < size && i / 32 * 4 + 4 <= words.size(); ++i) {
        uint32_t w = 0;
        std::memcpy(&w, words.data() + i / 32 * 4, sizeof w);
        bits[i] = (w >> (i % 32)) & 1U;
    }
    return bits;
}

std::vector<uint32_t> bits_to_words(const std::vector<bool>& bits) {
    std::vector<uint32_t> words((bits.size() + 31) / 32, 0);
    for (size_t i = 0; i < bits.size(); ++i) {
        if (bits[i]) words[i / 32] |= 1U << (i % 32);
    }
    return words;
}

constexpr AttrPolicy kBitset[] = {
    {ETHTOOL_A_BITSET_NOMASK, AttrType::Flag},  {ETHTOOL_A_BITSET_SIZE, AttrType::U32},    {ETHTOOL_A_BITSET_BITS, AttrType::Nested},
    {ETHTOOL_A_BITSET_VALUE, AttrType::Binary}, {ETHTOOL_A_BITSET_MASK, AttrType::Binary},
};
constexpr AttrPolicy kBitsetBit[] = {
    {ETHTOOL_A_BITSET_BIT_INDEX, AttrType::U32},
    {ETHTOOL_A_BITSET_BIT_NAME, AttrType::String},
    {ETHTOOL_A_BITSET_BIT_VALUE, AttrType::Flag},
};

// Walks every attribute of `type` in a nest (the parse table keeps only the last of repeated ones).
template <typename F>
void for_each_attr(Bytes payload, uint16_t type, F&& f) {
    size_t offset = 0;
    while (offset + sizeof(nlattr) <= payload.size()) {
        const auto* attr = reinterpret_cast<const nlattr*>(payload.data() + offset);
        if (attr->nla_len < sizeof(nlattr) || offset + attr->nla_len > payload.size()) throw malformed("attribute list");
        if ((attr->nla_type & NLA_TYPE_MASK) == type) f(attr);
        offset += NLA_ALIGN(attr->nla_len);
    }
}

// Every ethtool request starts with a header nest naming the device; flags ask for compact bitsets.
void put_header(nl::NlRequest& req, uint16_t header_attr, std::string_view ifname, uint32_t flags) {
    auto header = req.nest(header_attr);
    if (!ifname.empty()) req.put_strz(ETHTOOL_A_HEADER_DEV_NAME, ifname);
    if (flags != 0) req.put_u32(ETHTOOL_A_HEADER_FLAGS, flags);
    header.close();
}

struct NamedAttr {
    uint16_t type;
    AttrType kind;
    const char* name;
};

template <uint16_t Max, size_t N>
std::map<std::string, uint64_t> decode_named(Bytes message, const NamedAttr (&table)[N], const char* what) {
    std::vector<AttrPolicy> policy;
    for (const auto& row : table) policy.push_back({row.type, row.kind});
    const auto attrs = nl::parse_attrs<Max>(nl::genl_payload(message), policy, what);
    std::map<std::string, uint64_t> out;
    for (const auto& row : table) {
        if (const nlattr* a = attrs[row.type]) out[row.name] = row.kind == AttrType::U8 ? nl::attr_u8(a) : nl::attr_u32(a);
    }
    return out;
}

}  // namespace

Bitset decode_bitset(Bytes nest_payload) {
    const auto attrs = nl::parse_attrs<ETHTOOL_A_BITSET_MASK>(nest_payload, kBitset, "bitset");
    if (!attrs[ETHTOOL_A_BITSET_SIZE]) throw malformed("bitset without a size");
    Bitset out;
    out.size = nl::attr_u32(attrs[ETHTOOL_A_BITSET_SIZE]);
    const bool nomask = attrs[ETHTOOL_A_BITSET_NOMASK] != nullptr;
    if (attrs[ETHTOOL_A_BITSET_VALUE]) {
        const auto value = nl::attr_payload(attrs[ETHTOOL_A_BITSET_VALUE]);
        if (value.size() < (out.size + 31) / 32 * 4) throw malformed("compact bitset shorter than its size");
        out.value = words_to_bits(value, out.size);
        out.has_mask = attrs[ETHTOOL_A_BITSET_MASK] != nullptr;
        out.mask = out.has_mask ? words_to_bits(nl::attr_payload(attrs[ETHTOOL_A_BITSET_MASK]), out.size) : std::vector<bool>(out.size, false);
        return out;
    }
    // Verbose form: a list of bits. With NOMASK the listed bits are the set ones; otherwise the list is
    // the mask and a VALUE flag marks the set ones.
    out.value.assign(out.size, false);
    out.mask.assign(out.size, false);
    out.has_mask = !nomask;
    if (!attrs[ETHTOOL_A_BITSET_BITS]) return out;
    for_each_attr(nl::attr_payload(attrs[ETHTOOL_A_BITSET_BITS]), ETHTOOL_A_BITSET_BITS_BIT, [&](const nlattr* bit) {
        const auto b = nl::parse_attrs<ETHTOOL_A_BITSET_BIT_VALUE>(nl::attr_payload(bit), kBitsetBit, "bitset bit");
        if (!b[ETHTOOL_A_BITSET_BIT_INDEX]) throw malformed("bitset bit without an index");
        const uint32_t i = nl::attr_u32(b[ETHTOOL_A_BITSET_BIT_INDEX]);
        if (i >= out.size) throw malformed("bitset bit index beyond the size");
        if (nomask) {
            out.value[i] = true;
        } else {
            out.mask[i] = true;
            out.value[i] = b[ETHTOOL_A_BITSET_BIT_VALUE] != nullptr;
        }
    });
    return out;
}

std::vector<std::string> decode_string_set(Bytes message, uint32_t set_id) {
    static constexpr AttrPolicy kReply[] = {{ETHTOOL_A_STRSET_HEADER, AttrType::Nested}, {ETHTOOL_A_STRSET_STRINGSETS, AttrType::Nested}};
    static constexpr AttrPolicy kSet[] = {
        {ETHTOOL_A_STRINGSET_ID, AttrType::U32}, {ETHTOOL_A_STRINGSET_COUNT, AttrType::U32}, {ETHTOOL_A_STRINGSET_STRINGS, AttrType::Nested}};
    static constexpr AttrPolicy kString[] = {{ETHTOOL_A_STRING_INDEX, AttrType::U32}, {ETHTOOL_A_STRING_VALUE, AttrType::String}};
    const auto attrs = nl::parse_attrs<ETHTOOL_A_STRSET_MAX>(nl::genl_payload(message), kReply, "string sets");
    if (!attrs[ETHTOOL_A_STRSET_STRINGSETS]) throw malformed("string set reply without string sets");
    std::vector<std::string> names;
    bool found = false;
    for_each_attr(nl::attr_payload(attrs[ETHTOOL_A_STRSET_STRINGSETS]), ETHTOOL_A_STRINGSETS_STRINGSET, [&](const nlattr* set) {
        const auto s = nl::parse_attrs<ETHTOOL_A_STRINGSET_STRINGS>(nl::attr_payload(set), kSet, "string set");
        if (!s[ETHTOOL_A_STRINGSET_ID] || nl::attr_u32(s[ETHTOOL_A_STRINGSET_ID]) != set_id) return;
        found = true;
        const uint32_t count = s[ETHTOOL_A_STRINGSET_COUNT] ? nl::attr_u32(s[ETHTOOL_A_STRINGSET_COUNT]) : 0;
        names.assign(count, std::string());
        if (!s[ETHTOOL_A_STRINGSET_STRINGS]) return;
        for_each_attr(nl::attr_payload(s[ETHTOOL_A_STRINGSET_STRINGS]), ETHTOOL_A_STRINGS_STRING, [&](const nlattr* str) {
            const auto v = nl::parse_attrs<ETHTOOL_A_STRING_VALUE>(nl::attr_payload(str), kString, "string");
            if (!v[ETHTOOL_A_STRING_INDEX]) throw malformed("string without an index");
            const uint32_t i = nl::attr_u32(v[ETHTOOL_A_STRING_INDEX]);
            if (i >= names.size()) names.resize(i + 1);
            names[i] = v[ETHTOOL_A_STRING_VALUE] ? nl::attr_string(v[ETHTOOL_A_STRING_VALUE]) : std::string();
        });
    });
    if (!found) throw malformed("string set " + std::to_string(set_id) + " (missing from the reply)");
    return names;
}

namespace {
constexpr AttrPolicy kFeatures[] = {
    {ETHTOOL_A_FEATURES_HEADER, AttrType::Nested}, {ETHTOOL_A_FEATURES_HW, AttrType::Nested},       {ETHTOOL_A_FEATURES_WANTED, AttrType::Nested},
    {ETHTOOL_A_FEATURES_ACTIVE, AttrType::Nested}, {ETHTOOL_A_FEATURES_NOCHANGE, AttrType::Nested},
};
}  // namespace

FeatureBits decode_features(Bytes message, std::vector<std::string> names) {
    const auto attrs = nl::parse_attrs<ETHTOOL_A_FEATURES_MAX>(nl::genl_payload(message), kFeatures, "features");
    FeatureBits out;
    const size_t count = names.size();
    const auto field = [&](uint16_t type, const char* what) {
        if (!attrs[type]) throw malformed(std::string("features reply without ") + what);
        auto set = decode_bitset(nl::attr_payload(attrs[type]));
        if (set.size != count) {
            throw malformed(std::string("features ") + what + " of " + std::to_string(set.size) + " bits, string set has " + std::to_string(count));
        }
        return set.value;
    };
    out.hw = field(ETHTOOL_A_FEATURES_HW, "hw");
    out.wanted = field(ETHTOOL_A_FEATURES_WANTED, "wanted");
    out.active = field(ETHTOOL_A_FEATURES_ACTIVE, "active");
    out.nochange = field(ETHTOOL_A_FEATURES_NOCHANGE, "nochange");
    out.names = std::move(names);
    return out;
}

FeatureSetResult decode_features_set_reply(Bytes message, const FeatureBits& before) {
    const auto attrs = nl::parse_attrs<ETHTOOL_A_FEATURES_MAX>(nl::genl_payload(message), kFeatures, "features set reply");
    if (!attrs[ETHTOOL_A_FEATURES_WANTED] || !attrs[ETHTOOL_A_FEATURES_ACTIVE]) throw malformed("features set reply without diffs");
    const auto wanted = decode_bitset(nl::attr_payload(attrs[ETHTOOL_A_FEATURES_WANTED]));
    const auto active = decode_bitset(nl::attr_payload(attrs[ETHTOOL_A_FEATURES_ACTIVE]));
    if (wanted.size != before.size() || active.size != before.size()) throw malformed("features set reply of another size");
    FeatureSetResult out;
    out.active_after = before.active;
    for (size_t i = 0; i < before.size(); ++i) {
        if (active.mask[i]) out.active_after[i] = active.value[i];
    }
    out.wanted_differs = wanted.mask;
    return out;
}

LinkModes decode_link_modes(Bytes message) {
    static constexpr AttrPolicy kPolicy[] = {{ETHTOOL_A_LINKMODES_SPEED, AttrType::U32}, {ETHTOOL_A_LINKMODES_DUPLEX, AttrType::U8}};
    const auto attrs = nl::parse_attrs<ETHTOOL_A_LINKMODES_MAX>(nl::genl_payload(message), kPolicy, "link modes");
    LinkModes out;
    if (attrs[ETHTOOL_A_LINKMODES_SPEED]) {
        const uint32_t speed = nl::attr_u32(attrs[ETHTOOL_A_LINKMODES_SPEED]);
        if (speed != 0 && speed != static_cast<uint32_t>(SPEED_UNKNOWN)) out.speed_mbps = speed;
    }
    if (attrs[ETHTOOL_A_LINKMODES_DUPLEX]) {
        const uint8_t duplex = nl::attr_u8(attrs[ETHTOOL_A_LINKMODES_DUPLEX]);
        out.duplex = duplex == DUPLEX_FULL ? "full" : duplex == DUPLEX_HALF ? "half" : "";
    }
    return out;
}

std::map<std::string, uint64_t> decode_rings(Bytes message) {
    static constexpr NamedAttr kTable[] = {
        {ETHTOOL_A_RINGS_RX_MAX, AttrType::U32, "rx_max"},
        {ETHTOOL_A_RINGS_RX_MINI_MAX, AttrType::U32, "rx_mini_max"},
        {ETHTOOL_A_RINGS_RX_JUMBO_MAX, AttrType::U32, "rx_jumbo_max"},
        {ETHTOOL_A_RINGS_TX_MAX, AttrType::U32, "tx_max"},
        {ETHTOOL_A_RINGS_RX, AttrType::U32, "rx"},
        {ETHTOOL_A_RINGS_RX_MINI, AttrType::U32, "rx_mini"},
        {ETHTOOL_A_RINGS_RX_JUMBO, AttrType::U32, "rx_jumbo"},
        {ETHTOOL_A_RINGS_TX, AttrType::U32, "tx"},
        {ETHTOOL_A_RINGS_RX_BUF_LEN, AttrType::U32, "rx_buf_len"},
        {ETHTOOL_A_RINGS_TCP_DATA_SPLIT, AttrType::U8, "tcp_data_split"},
        {ETHTOOL_A_RINGS_CQE_SIZE, AttrType::U32, "cqe_size"},
        {ETHTOOL_A_RINGS_TX_PUSH, AttrType::U8, "tx_push"},
    };
    return decode_named<ETHTOOL_A_RINGS_MAX>(message, kTable, "rings");
}

std::map<std::string, uint64_t> decode_channels(Bytes message) {
    static constexpr NamedAttr kTable[] = {
        {ETHTOOL_A_CHANNELS_RX_MAX, AttrType::U32, "rx_max"},           {ETHTOOL_A_CHANNELS_TX_MAX, AttrType::U32, "tx_max"},
        {ETHTOOL_A_CHANNELS_OTHER_MAX, AttrType::U32, "other_max"},     {ETHTOOL_A_CHANNELS_COMBINED_MAX, AttrType::U32, "combined_max"},
        {ETHTOOL_A_CHANNELS_RX_COUNT, AttrType::U32, "rx_count"},       {ETHTOOL_A_CHANNELS_TX_COUNT, AttrType::U32, "tx_count"},
        {ETHTOOL_A_CHANNELS_OTHER_COUNT, AttrType::U32, "other_count"}, {ETHTOOL_A_CHANNELS_COMBINED_COUNT, AttrType::U32, "combined_count"},
    };
    return decode_named<ETHTOOL_A_CHANNELS_MAX>(message, kTable, "channels");
}

std::map<std::string, uint64_t> decode_coalesce(Bytes message) {
    static constexpr NamedAttr kTable[] = {
        {ETHTOOL_A_COALESCE_RX_USECS, AttrType::U32, "rx_usecs"},
        {ETHTOOL_A_COALESCE_RX_MAX_FRAMES, AttrType::U32, "rx_max_frames"},
        {ETHTOOL_A_COALESCE_RX_USECS_IRQ, AttrType::U32, "rx_usecs_irq"},
        {ETHTOOL_A_COALESCE_RX_MAX_FRAMES_IRQ, AttrType::U32, "rx_max_frames_irq"},
        {ETHTOOL_A_COALESCE_TX_USECS, AttrType::U32, "tx_usecs"},
        {ETHTOOL_A_COALESCE_TX_MAX_FRAMES, AttrType::U32, "tx_max_frames"},
        {ETHTOOL_A_COALESCE_TX_USECS_IRQ, AttrType::U32, "tx_usecs_irq"},
        {ETHTOOL_A_COALESCE_TX_MAX_FRAMES_IRQ, AttrType::U32, "tx_max_frames_irq"},
        {ETHTOOL_A_COALESCE_STATS_BLOCK_USECS, AttrType::U32, "stats_block_usecs"},
        {ETHTOOL_A_COALESCE_USE_ADAPTIVE_RX, AttrType::U8, "use_adaptive_rx"},
        {ETHTOOL_A_COALESCE_USE_ADAPTIVE_TX, AttrType::U8, "use_adaptive_tx"},
        {ETHTOOL_A_COALESCE_PKT_RATE_LOW, AttrType::U32, "pkt_rate_low"},
        {ETHTOOL_A_COALESCE_PKT_RATE_HIGH, AttrType::U32, "pkt_rate_high"},
        {ETHTOOL_A_COALESCE_RATE_SAMPLE_INTERVAL, AttrType::U32, "rate_sample_interval"},
    };
    return decode_named<ETHTOOL_A_COALESCE_MAX>(message, kTable, "coalesce");
}

EthtoolNetlink EthtoolNetlink::open() {
    auto sock = nl::NetlinkSocket::open(NETLINK_GENERIC);
    const uint16_t family = nl::resolve_genl_family(sock, ETHTOOL_GENL_NAME);
    return EthtoolNetlink(std::move(sock), family);
}

std::vector<uint8_t> EthtoolNetlink::get(uint8_t cmd, uint16_t header_attr, std::string_view ifname, const std::string& what, uint32_t flags) {
    auto req = nl::NlRequest::genl(family_, cmd, ETHTOOL_GENL_VERSION, NLM_F_ACK);
    put_header(req, header_attr, ifname, flags);
    std::vector<uint8_t> reply;
    try {
        sock_.transact(req, [&](Bytes message) { reply.assign(message.begin(), message.end()); });
    } catch (const Error& e) {
        if (e.code().value() == ENODEV) throw usage_error("no such interface: " + std::string(ifname));
        throw Error(e.kind(), "read " + what, e.code(), {std::string(ifname), what, e.context().extack});
    }
    if (reply.empty()) throw malformed(what + " (no reply)");
    return reply;
}

std::vector<std::string> EthtoolNetlink::feature_names() {
    auto req = nl::NlRequest::genl(family_, ETHTOOL_MSG_STRSET_GET, ETHTOOL_GENL_VERSION, NLM_F_ACK);
    put_header(req, ETHTOOL_A_STRSET_HEADER, {}, 0);
    auto sets = req.nest(ETHTOOL_A_STRSET_STRINGSETS);
    auto set = req.nest(ETHTOOL_A_STRINGSETS_STRINGSET);
    req.put_u32(ETHTOOL_A_STRINGSET_ID, ETH_SS_FEATURES);
    set.close();
    sets.close();
    std::vector<std::string> names;
    sock_.transact(req, [&](Bytes message) { names = decode_string_set(message, ETH_SS_FEATURES); });
    return names;
}

FeatureBits EthtoolNetlink::features(std::string_view ifname, bool compact) {
    auto names = feature_names();
    const auto reply = get(ETHTOOL_MSG_FEATURES_GET, ETHTOOL_A_FEATURES_HEADER, ifname, "features", compact ? ETHTOOL_FLAG_COMPACT_BITSETS : 0);
    return decode_features(reply, std::move(names));
}

FeatureSetResult EthtoolNetlink::set_features(std::string_view ifname, const FeatureBits& before, const FeatureRequest& request) {
    std::vector<bool> value(before.size(), false);
    std::vector<bool> mask(before.size(), false);
    for (const auto& [bit, on] : request) {
        value.at(bit) = on;
        mask.at(bit) = true;
    }
    const auto value_words = bits_to_words(value);
    const auto mask_words = bits_to_words(mask);
    auto req = nl::NlRequest::genl(family_, ETHTOOL_MSG_FEATURES_SET, ETHTOOL_GENL_VERSION, NLM_F_ACK);
    put_header(req, ETHTOOL_A_FEATURES_HEADER, ifname, ETHTOOL_FLAG_COMPACT_BITSETS);
    auto wanted = req.nest(ETHTOOL_A_FEATURES_WANTED);
    req.put_u32(ETHTOOL_A_BITSET_SIZE, static_cast<uint32_t>(before.size()));
    req.put_binary(ETHTOOL_A_BITSET_VALUE, value_words.data(), value_words.size() * 4);
    req.put_binary(ETHTOOL_A_BITSET_MASK, mask_words.data(), mask_words.size() * 4);
    wanted.close();

    std::optional<FeatureSetResult> result;
    try {
        sock_.transact(req, [&](Bytes message) {
            const auto* genl = static_cast<const genlmsghdr*>(mnl_nlmsg_get_payload(reinterpret_cast<const nlmsghdr*>(message.data())));
            if (genl->cmd == ETHTOOL_MSG_FEATURES_SET_REPLY) result = decode_features_set_reply(message, before);
        });
    } catch (const Error& e) {
        if (e.code().value() == ENODEV) throw usage_error("no such interface: " + std::string(ifname));
        throw Error(e.kind(), "set features", e.code(), {std::string(ifname), "features", e.context().extack});
    }
    // The kernel sends no reply when nothing at all was modified: the state is then unchanged.
    if (!result) result = FeatureSetResult{before.active, std::vector<bool>(before.size(), false)};
    return *result;
}

LinkModes EthtoolNetlink::link_modes(std::string_view ifname) {
    return decode_link_modes(get(ETHTOOL_MSG_LINKMODES_GET, ETHTOOL_A_LINKMODES_HEADER, ifname, "link modes"));
}

namespace {
// Drivers without an ethtool op answer EOPNOTSUPP: that is "nothing to report", not a failure.
template <typename Decode, typename Get>
std::map<std::string, uint64_t> optional_info(Get&& get, Decode&& decode, std::string* why) {
    try {
        return decode(get());
    } catch (const Error& e) {
        if (e.code().value() == EOPNOTSUPP) {
            if (why != nullptr) *why = e.code().message() + (e.context().extack.empty() ? "" : " (kernel: \"" + e.context().extack + "\")");
            return {};
        }
        throw;
    }
}

using FieldTable = std::map<std::string, std::pair<uint16_t, bool>>;  // name -> attribute, is u8

const FieldTable kChannelFields = {{"rx", {ETHTOOL_A_CHANNELS_RX_COUNT, false}},
                                   {"tx", {ETHTOOL_A_CHANNELS_TX_COUNT, false}},
                                   {"other", {ETHTOOL_A_CHANNELS_OTHER_COUNT, false}},
                                   {"combined", {ETHTOOL_A_CHANNELS_COMBINED_COUNT, false}}};
const FieldTable kRingFields = {{"rx", {ETHTOOL_A_RINGS_RX, false}},
                                {"tx", {ETHTOOL_A_RINGS_TX, false}},
                                {"rx-jumbo", {ETHTOOL_A_RINGS_RX_JUMBO, false}},
                                {"rx-mini", {ETHTOOL_A_RINGS_RX_MINI, false}}};
const FieldTable kCoalesceFields = {{"rx-usecs", {ETHTOOL_A_COALESCE_RX_USECS, false}},
                                    {"rx-frames", {ETHTOOL_A_COALESCE_RX_MAX_FRAMES, false}},
                                    {"rx-usecs-irq", {ETHTOOL_A_COALESCE_RX_USECS_IRQ, false}},
                                    {"rx-frames-irq", {ETHTOOL_A_COALESCE_RX_MAX_FRAMES_IRQ, false}},
                                    {"tx-usecs", {ETHTOOL_A_COALESCE_TX_USECS, false}},
                                    {"tx-frames", {ETHTOOL_A_COALESCE_TX_MAX_FRAMES, false}},
                                    {"tx-usecs-irq", {ETHTOOL_A_COALESCE_TX_USECS_IRQ, false}},
                                    {"tx-frames-irq", {ETHTOOL_A_COALESCE_TX_MAX_FRAMES_IRQ, false}},
                                    {"stats-block-usecs", {ETHTOOL_A_COALESCE_STATS_BLOCK_USECS, false}},
                                    {"adaptive-rx", {ETHTOOL_A_COALESCE_USE_ADAPTIVE_RX, true}},
                                    {"adaptive-tx", {ETHTOOL_A_COALESCE_USE_ADAPTIVE_TX, true}},
                                    {"pkt-rate-low", {ETHTOOL_A_COALESCE_PKT_RATE_LOW, false}},
                                    {"pkt-rate-high", {ETHTOOL_A_COALESCE_PKT_RATE_HIGH, false}},
                                    {"sample-interval", {ETHTOOL_A_COALESCE_RATE_SAMPLE_INTERVAL, false}}};

// The decoders' names (ethtool's attribute names, lower case) for the names users type.
const std::map<std::string, std::string> kDecodedName = {
    {"rx_usecs", "rx-usecs"},
    {"rx_max_frames", "rx-frames"},
    {"rx_usecs_irq", "rx-usecs-irq"},
    {"rx_max_frames_irq", "rx-frames-irq"},
    {"tx_usecs", "tx-usecs"},
    {"tx_max_frames", "tx-frames"},
    {"tx_usecs_irq", "tx-usecs-irq"},
    {"tx_max_frames_irq", "tx-frames-irq"},
    {"stats_block_usecs", "stats-block-usecs"},
    {"use_adaptive_rx", "adaptive-rx"},
    {"use_adaptive_tx", "adaptive-tx"},
    {"pkt_rate_low", "pkt-rate-low"},
    {"pkt_rate_high", "pkt-rate-high"},
    {"rate_sample_interval", "sample-interval"},
};

}  // namespace

const std::vector<std::string>& tuning_field_names(std::string_view kind) {
    const auto names = [](const FieldTable& t) {
        std::vector<std::string> out;
        for (const auto& [name, attr] : t) out.push_back(name);
        return out;
    };
    static const std::vector<std::string> kChannels = names(kChannelFields), kRings = names(kRingFields), kCoalesce = names(kCoalesceFields);
    return kind == "channels" ? kChannels : kind == "rings" ? kRings : kCoalesce;
}

std::map<std::string, uint64_t> tuning_names(std::string_view kind, const std::map<std::string, uint64_t>& decoded,
                                             std::map<std::string, uint64_t>* max) {
    std::map<std::string, uint64_t> out;
    for (const auto& [name, value] : decoded) {
        if (kind == "channels") {
            const auto us = name.rfind('_');
            const std::string base = name.substr(0, us), suffix = name.substr(us + 1);
            if (suffix == "count") out[base] = value;
            if (suffix == "max" && max != nullptr) (*max)[base] = value;
        } else if (kind == "rings") {
            if (name.size() > 4 && name.compare(name.size() - 4, 4, "_max") == 0) continue;
            if (name == "rx" || name == "tx" || name == "rx_jumbo" || name == "rx_mini") {
                std::string n = name;
                std::replace(n.begin(), n.end(), '_', '-');
                out[n] = value;
            }
        } else if (const auto it = kDecodedName.find(name); it != kDecodedName.end()) {
            out[it->second] = value;
        }
    }
    return out;
}

std::map<std::string, uint64_t> EthtoolNetlink::rings(std::string_view ifname, std::string* why) {
    return optional_info([&] { return get(ETHTOOL_MSG_RINGS_GET, ETHTOOL_A_RINGS_HEADER, ifname, "rings"); },
                         [](const std::vector<uint8_t>& m) { return decode_rings(m); }, why);
}

std::map<std::string, uint64_t> EthtoolNetlink::coalesce(std::string_view ifname, std::string* why) {
    return optional_info([&] { return get(ETHTOOL_MSG_COALESCE_GET, ETHTOOL_A_COALESCE_HEADER, ifname, "coalesce"); },
                         [](const std::vector<uint8_t>& m) { return decode_coalesce(m); }, why);
}

std::map<std::string, uint64_t> EthtoolNetlink::channels(std::string_view ifname, std::string* why) {
    return optional_info([&] { return get(ETHTOOL_MSG_CHANNELS_GET, ETHTOOL_A_CHANNELS_HEADER, ifname, "channels"); },
                         [](const std::vector<uint8_t>& m) { return decode_channels(m); }, why);
}

void EthtoolNetlink::set_u32s(uint8_t cmd, uint16_t header_attr, std::string_view ifname, const std::string& what,
                              const std::map<std::string, uint32_t>& values, const FieldTable& table) {
    auto req = nl::NlRequest::genl(family_, cmd, ETHTOOL_GENL_VERSION, NLM_F_ACK);
    put_header(req, header_attr, ifname, 0);
    std::string asked;
    for (const auto& [name, value] : values) {
        const auto it = table.find(name);
        if (it == table.end()) throw usage_error(what + ": unknown field \"" + name + "\"");
        if (it->second.second) {
            const uint8_t v = value != 0 ? 1 : 0;
            req.put_binary(it->second.first, &v, 1);
        } else {
            req.put_u32(it->second.first, value);
        }
        asked += (asked.empty() ? "" : " ") + name + " " + std::to_string(value);
    }
    try {
        sock_.transact(req, [](Bytes) {});
    } catch (const Error& e) {
        if (e.code().value() == ENODEV) throw usage_error("no such interface: " + std::string(ifname));
        throw Error(e.kind(), "set " + what + " " + asked, e.code(), {std::string(ifname), what, e.context().extack});
    }
}

void EthtoolNetlink::set_channels(std::string_view ifname, const std::map<std::string, uint32_t>& values) {
    set_u32s(ETHTOOL_MSG_CHANNELS_SET, ETHTOOL_A_CHANNELS_HEADER, ifname, "channels", values, kChannelFields);
}

void EthtoolNetlink::set_rings(std::string_view ifname, const std::map<std::string, uint32_t>& values) {
    set_u32s(ETHTOOL_MSG_RINGS_SET, ETHTOOL_A_RINGS_HEADER, ifname, "rings", values, kRingFields);
}

void EthtoolNetlink::set_coalesce(std::string_view ifname, const std::map<std::string, uint32_t>& values) {
    set_u32s(ETHTOOL_MSG_COALESCE_SET, ETHTOOL_A_COALESCE_HEADER, ifname, "coalesce", values, kCoalesceFields);
}

}  // namespace nm

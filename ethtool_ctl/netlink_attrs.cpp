#include "ethtool_ctl/netlink_attrs.hpp"

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>

#include <algorithm>
#include <cstring>

#include "core/base/error.hpp"

namespace nm::nl {
namespace {

Error malformed(std::string_view what, const std::string& detail) {
    return Error(ErrorKind::Failed, "decode " + std::string(what) + " from the kernel: " + detail, std::make_error_code(std::errc::bad_message));
}

// Minimum payload size per type; strings need their terminator, flags carry nothing.
bool length_ok(AttrType kind, size_t len) {
    switch (kind) {
        case AttrType::U8: return len >= 1;
        case AttrType::U16: return len >= 2;
        case AttrType::U32: return len >= 4;
        case AttrType::U64: return len >= 8;
        case AttrType::String: return len >= 1;
        case AttrType::Flag: return len == 0;
        case AttrType::Nested:
        case AttrType::Binary: return true;
    }
    return false;
}

}  // namespace

void parse_attrs_into(Bytes payload, std::span<const AttrPolicy> policy, std::span<const nlattr*> table, std::string_view what) {
    size_t offset = 0;
    while (offset + sizeof(nlattr) <= payload.size()) {
        const auto* attr = reinterpret_cast<const nlattr*>(payload.data() + offset);
        if (attr->nla_len < sizeof(nlattr) || offset + attr->nla_len > payload.size()) {
            throw malformed(what, "attribute at offset " + std::to_string(offset) + " is truncated");
        }
        const uint16_t type = attr->nla_type & NLA_TYPE_MASK;
        const auto row = std::find_if(policy.begin(), policy.end(), [&](const AttrPolicy& p) { return p.type == type; });
        if (row != policy.end() && type < table.size()) {
            const size_t len =
                attr->nla_len - sizeof(nlattr);  // not NLA_HDRLEN: its NLA_ALIGN mask converts -4 to size_t (UBSan implicit-conversion)
            if (!length_ok(row->kind, len)) {
                throw malformed(what, "attribute " + std::to_string(type) + " has a bad length " + std::to_string(len));
            }
            if (row->kind == AttrType::String && payload[offset + attr->nla_len - 1] != 0) {
                throw malformed(what, "string attribute " + std::to_string(type) + " is not terminated");
            }
            table[type] = attr;
        }
        offset += NLA_ALIGN(attr->nla_len);
    }
}

Bytes genl_payload(Bytes message) {
    constexpr size_t kHeaders = NLMSG_HDRLEN + GENL_HDRLEN;
    if (message.size() < kHeaders) throw malformed("generic netlink message", "shorter than its headers");
    const auto* hdr = reinterpret_cast<const nlmsghdr*>(message.data());
    const size_t len = std::min<size_t>(hdr->nlmsg_len, message.size());
    if (len < kHeaders) throw malformed("generic netlink message", "length field shorter than its headers");
    return message.subspan(kHeaders, len - kHeaders);
}

Bytes attr_payload(const nlattr* attr) { return Bytes(static_cast<const uint8_t*>(mnl_attr_get_payload(attr)), mnl_attr_get_payload_len(attr)); }

uint8_t attr_u8(const nlattr* attr) { return attr_payload(attr)[0]; }

uint32_t attr_u32(const nlattr* attr) {
    uint32_t v = 0;
    std::memcpy(&v, mnl_attr_get_payload(attr), sizeof v);
    return v;
}

uint64_t attr_u64(const nlattr* attr) {
    uint64_t v = 0;
    std::memcpy(&v, mnl_attr_get_payload(attr), sizeof v);
    return v;
}

std::string attr_string(const nlattr* attr) {
    const auto bytes = attr_payload(attr);
    const auto end = std::find(bytes.begin(), bytes.end(), uint8_t{0});
    return std::string(bytes.begin(), end);
}

std::basic_string<uint8_t> from_hex(std::string_view hex) {
    std::basic_string<uint8_t> out;
    int pending = -1;
    for (const char c : hex) {
        if (c == ' ' || c == '\n' || c == '\t' || c == '\r') continue;
        int v = -1;
        if (c >= '0' && c <= '9') v = c - '0';
        if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
        if (c >= 'A' && c <= 'F') v = c - 'A' + 10;
        if (v < 0) throw usage_error(std::string("hex: unexpected character '") + c + "'");
        if (pending < 0) {
            pending = v;
        } else {
            out.push_back(static_cast<uint8_t>(pending * 16 + v));
            pending = -1;
        }
    }
    if (pending >= 0) throw usage_error("hex: odd number of digits");
    return out;
}

std::string to_hex(Bytes bytes) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    for (size_t i = 0; i < bytes.size(); ++i) {
        out += kDigits[bytes[i] >> 4];
        out += kDigits[bytes[i] & 15];
        if (i % 32 == 31 || i + 1 == bytes.size()) out += '\n';
    }
    return out;
}

}  // namespace nm::nl

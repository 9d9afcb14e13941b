#pragma once
// Netlink attribute parsing: one tolerant parser with per-message policy tables, and small typed readers.
// Pure functions over bytes, so the decoders built on them can be fed captured kernel replies in tests.
#include <linux/netlink.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace nm::nl {

/// What an attribute must look like; the parser checks the length against it.
enum class AttrType { U8, U16, U32, U64, String, Flag, Nested, Binary };

/// One row of a policy table: attribute number and its type. Numbers not in the table are skipped.
struct AttrPolicy {
    uint16_t type;
    AttrType kind;
};

/// Bytes of one whole netlink message (nlmsghdr included), or of an attribute's payload.
using Bytes = std::span<const uint8_t>;

/// Attributes by number, nullptr where absent.
template <uint16_t Max>
using AttrTable = std::array<const nlattr*, Max + 1>;

/// The untyped core of parse_attrs (fills `table`, whose size is the highest number kept + 1).
void parse_attrs_into(Bytes payload, std::span<const AttrPolicy> policy, std::span<const nlattr*> table, std::string_view what);

/// Parses the attributes in `payload` into a table indexed by attribute number (nullptr = absent).
/// Known attributes (in `policy`) are checked for type and length; unknown numbers and numbers above
/// `Max` are skipped, because newer kernels add attributes. Throws nm::Error (Failed) naming `what` and
/// the attribute when a known attribute is malformed or the attribute stream is truncated.
template <uint16_t Max>
AttrTable<Max> parse_attrs(Bytes payload, std::span<const AttrPolicy> policy, std::string_view what) {
    AttrTable<Max> table{};
    parse_attrs_into(payload, policy, table, what);
    return table;
}

/// The attributes of a generic netlink message: the bytes after nlmsghdr and genlmsghdr. Throws
/// nm::Error (Failed) when the message is shorter than its headers.
Bytes genl_payload(Bytes message);

/// The payload of an attribute (for nested attributes: the attributes inside).
Bytes attr_payload(const nlattr* attr);

/// Typed reads of an attribute the policy already checked for length (host byte order, as netlink sends).
uint8_t attr_u8(const nlattr* attr);
/// See attr_u8.
uint32_t attr_u32(const nlattr* attr);
/// See attr_u8; copies, so an attribute only 4-byte aligned is fine.
uint64_t attr_u64(const nlattr* attr);
/// A NUL-terminated string attribute, without its terminator.
std::string attr_string(const nlattr* attr);

/// Converts "0a1b..." (whitespace ignored) to bytes; throws nm::Error (Usage) on bad hex. For fixtures.
std::basic_string<uint8_t> from_hex(std::string_view hex);
/// Lower-case hex of `bytes`, 32 bytes per line.
std::string to_hex(Bytes bytes);

}  // namespace nm::nl

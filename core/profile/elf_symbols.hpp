#pragma once
// Function symbols of an ELF file (the engine's own executable, the libraries and programs other tasks
// run), to name user-space samples. A pure parser over the file's bytes that never reads outside them
// (tested on a small image built in the test), and a reader that maps the file.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace nm::profile {

class ElfSymbols {
public:
    struct Symbol {
        uint64_t addr = 0;  ///< the symbol's virtual address in the file's own layout
        uint64_t size = 0;
        std::string name;  ///< as the file has it (mangled for C++)
    };

    /// Parses a 64-bit little-endian ELF image: the function symbols of .symtab, or of .dynsym when the
    /// file is stripped, and the PT_LOAD segments. Anything malformed gives an empty table.
    static ElfSymbols parse(std::span<const std::byte> image);

    /// The address in the file's layout of file offset `offset` (through the PT_LOAD segment holding it).
    std::optional<uint64_t> address_of_offset(uint64_t offset) const;

    /// The function `addr` (in the file's layout) falls in: within its size, or, for a symbol without a
    /// size, before the next symbol. nullptr when none.
    const Symbol* find(uint64_t addr) const;

    size_t size() const { return symbols_.size(); }
    /// The GNU build id (NT_GNU_BUILD_ID) in hex, "" when the file has none.
    const std::string& build_id() const { return build_id_; }
    /// True when the symbols came from .symtab (not only the exported ones of .dynsym).
    bool full() const { return full_; }
    /// Takes `debug`'s symbols (a detached debug file of this one: same layout, full .symtab).
    void adopt_symbols(ElfSymbols&& debug) {
        symbols_ = std::move(debug.symbols_);
        full_ = debug.full_;
    }

private:
    struct Segment {
        uint64_t offset, vaddr, filesz;
    };
    std::vector<Segment> segments_;
    std::vector<Symbol> symbols_;  // sorted by addr, one per address
    std::string build_id_;
    bool full_ = false;
};

/// Reads the ELF file at `path`; an empty table when it cannot be opened or is not ELF. A stripped file's
/// symbols come from its detached debug file when one is installed (/usr/lib/debug/.build-id/xx/yyyy.debug,
/// as gdb and perf find them: Debian's -dbg and -dbgsym packages).
ElfSymbols read_elf_symbols(const std::string& path);

/// A C++ symbol demangled the way `perf report` shows it (without the parameter list and return type:
/// "nm::udp_send"); other names unchanged.
std::string demangle(const std::string& name);

}  // namespace nm::profile

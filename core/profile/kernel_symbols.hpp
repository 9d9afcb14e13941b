#pragma once
// Kernel symbols from /proc/kallsyms: the text symbols sorted by address, found by binary search. A pure
// parser over the file's text (tested on canned lines) and a reader.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace nm::profile {

/// The kernel's function symbols (kallsyms types t, T, w, W), modules included.
class KernelSymbols {
public:
    struct Symbol {
        uint64_t addr = 0;
        std::string_view name;
        std::string_view module;  ///< "" for the kernel image, "veth" for [veth]
    };

    /// Parses kallsyms text ("ffffffff81000000 T _stext" and "ffffffffc0a01000 t veth_xmit\t[veth]" lines).
    /// Several names at one address keep the one perf would show: a global over a local, then fewer
    /// leading underscores, then the longer name.
    static KernelSymbols parse(std::string text);

    /// The symbol `ip` falls in: the last one starting at or below it, if it starts less than 1 MiB below
    /// (no kernel function is that long; farther means no symbol covers the address). nullptr otherwise.
    const Symbol* find(uint64_t ip) const;

    size_t size() const { return symbols_.size(); }
    /// True when the text had symbols but every address was 0: kernel.kptr_restrict (or the reader's
    /// missing CAP_SYSLOG) hides them.
    bool addresses_hidden() const { return hidden_; }

private:
    std::shared_ptr<const std::string> text_;  // the names point into it (stable when the table moves)
    std::vector<Symbol> symbols_;
    bool hidden_ = false;
};

/// Reads /proc/kallsyms. Throws nm::Error (Failed) when it cannot be read.
KernelSymbols read_kernel_symbols();

}  // namespace nm::profile

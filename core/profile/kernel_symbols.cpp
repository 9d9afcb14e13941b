#include "core/profile/kernel_symbols.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include "core/base/error.hpp"
#include "core/base/text_lines.hpp"

namespace nm::profile {
namespace {

constexpr uint64_t kMaxSymbolSpan = 1 << 20;

size_t leading_underscores(std::string_view s) {
    size_t n = 0;
    while (n < s.size() && s[n] == '_') ++n;
    return n;
}

// perf's choose_best_symbol for symbols at one address (tools/perf/util/symbol.c), less the sizes kallsyms
// does not have: a global one, then the fewest leading underscores, then the longest name.
bool better(const KernelSymbols::Symbol& a, bool a_global, const KernelSymbols::Symbol& b, bool b_global) {
    if (a_global != b_global) return a_global;
    const size_t ua = leading_underscores(a.name), ub = leading_underscores(b.name);
    if (ua != ub) return ua < ub;
    if (a.name.size() != b.name.size()) return a.name.size() > b.name.size();
    return a.name < b.name;
}

}  // namespace

KernelSymbols KernelSymbols::parse(std::string text) {
    KernelSymbols k;
    k.text_ = std::make_shared<const std::string>(std::move(text));
    struct Entry {
        Symbol sym;
        bool global;
    };
    std::vector<Entry> entries;
    bool any = false, nonzero = false;
    const std::string_view all(*k.text_);
    for_each_line(all, [&](std::string_view line) {
        const size_t sp1 = line.find(' ');
        if (sp1 == std::string_view::npos || sp1 + 3 >= line.size() || line[sp1 + 2] != ' ') return;
        uint64_t addr = 0;
        const auto [p, ec] = std::from_chars(line.data(), line.data() + sp1, addr, 16);
        if (ec != std::errc() || p != line.data() + sp1) return;
        const char type = line[sp1 + 1];
        any = true;
        if (addr != 0) nonzero = true;
        if (type != 't' && type != 'T' && type != 'w' && type != 'W') return;
        std::string_view rest = line.substr(sp1 + 3);
        std::string_view module;
        if (const size_t tab = rest.find('\t'); tab != std::string_view::npos) {
            module = rest.substr(tab + 1);
            rest = rest.substr(0, tab);
            if (module.size() >= 2 && module.front() == '[' && module.back() == ']') module = module.substr(1, module.size() - 2);
        }
        if (rest.empty()) return;
        entries.push_back({{addr, rest, module}, type == 'T'});
    });
    k.hidden_ = any && !nonzero;
    if (k.hidden_) return k;
    std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.sym.addr < b.sym.addr; });
    for (size_t i = 0; i < entries.size();) {
        size_t best = i, j = i + 1;
        for (; j < entries.size() && entries[j].sym.addr == entries[i].sym.addr; ++j) {
            if (better(entries[j].sym, entries[j].global, entries[best].sym, entries[best].global)) best = j;
        }
        k.symbols_.push_back(entries[best].sym);
        i = j;
    }
    return k;
}

const KernelSymbols::Symbol* KernelSymbols::find(uint64_t ip) const {
    auto it = std::upper_bound(symbols_.begin(), symbols_.end(), ip, [](uint64_t v, const Symbol& s) { return v < s.addr; });
    if (it == symbols_.begin()) return nullptr;
    --it;
    if (ip - it->addr >= kMaxSymbolSpan) return nullptr;
    return &*it;
}

KernelSymbols read_kernel_symbols() {
    std::ifstream in("/proc/kallsyms");
    if (!in) throw Error(ErrorKind::Failed, "read /proc/kallsyms");
    std::ostringstream text;
    text << in.rdbuf();
    return KernelSymbols::parse(std::move(text).str());
}

}  // namespace nm::profile

#include "core/profile/elf_symbols.hpp"

#include <cxxabi.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "core/base/unique_fd.hpp"

namespace nm::profile {
namespace {

template <typename T>
std::optional<T> read_at(std::span<const std::byte> image, uint64_t offset) {
    if (offset > image.size() || image.size() - offset < sizeof(T)) return std::nullopt;
    T v;
    std::memcpy(&v, image.data() + offset, sizeof(T));
    return v;
}

size_t leading_underscores(const std::string& s) {
    size_t n = 0;
    while (n < s.size() && s[n] == '_') ++n;
    return n;
}

struct Candidate {
    ElfSymbols::Symbol sym;
    unsigned char binding;
};

// perf's choose_best_symbol (tools/perf/util/symbol.c): a sized one, a non-weak one, a global one, fewer
// leading underscores, the longer name.
bool better(const Candidate& a, const Candidate& b) {
    if ((a.sym.size > 0) != (b.sym.size > 0)) return a.sym.size > 0;
    if ((a.binding == STB_WEAK) != (b.binding == STB_WEAK)) return a.binding != STB_WEAK;
    if ((a.binding == STB_GLOBAL) != (b.binding == STB_GLOBAL)) return a.binding == STB_GLOBAL;
    const size_t ua = leading_underscores(a.sym.name), ub = leading_underscores(b.sym.name);
    if (ua != ub) return ua < ub;
    if (a.sym.name.size() != b.sym.name.size()) return a.sym.name.size() > b.sym.name.size();
    return a.sym.name < b.sym.name;
}

// Index of the ')' that closes the last top-level parameter list of a demangled name, or npos: skips
// trailing qualifiers (" const", " &", " noexcept").
size_t params_start(const std::string& s) {
    size_t end = s.size();
    for (bool trimmed = true; trimmed;) {
        trimmed = false;
        for (const char* q : {" const", " volatile", " &&", " &", " noexcept"}) {
            const size_t n = std::strlen(q);
            if (end >= n && s.compare(end - n, n, q) == 0) {
                end -= n;
                trimmed = true;
            }
        }
    }
    if (end == 0 || s[end - 1] != ')') return std::string::npos;
    int depth = 0;
    for (size_t i = end; i-- > 0;) {
        if (s[i] == ')' || s[i] == '>') ++depth;
        else if (s[i] == '(' || s[i] == '<') {
            if (--depth == 0) return s[i] == '(' ? i : std::string::npos;
        }
    }
    return std::string::npos;
}

}  // namespace

ElfSymbols ElfSymbols::parse(std::span<const std::byte> image) {
    ElfSymbols out;
    const auto eh = read_at<Elf64_Ehdr>(image, 0);
    if (!eh || std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB) {
        return out;
    }
    if (eh->e_phentsize == sizeof(Elf64_Phdr)) {
        for (uint64_t i = 0; i < eh->e_phnum; ++i) {
            const auto ph = read_at<Elf64_Phdr>(image, eh->e_phoff + i * sizeof(Elf64_Phdr));
            if (!ph) return ElfSymbols{};
            if (ph->p_type == PT_LOAD) out.segments_.push_back({ph->p_offset, ph->p_vaddr, ph->p_filesz});
        }
    }
    // The build id, from the first NT_GNU_BUILD_ID note of a PT_NOTE segment.
    for (uint64_t i = 0; eh->e_phentsize == sizeof(Elf64_Phdr) && i < eh->e_phnum && out.build_id_.empty(); ++i) {
        const auto ph = read_at<Elf64_Phdr>(image, eh->e_phoff + i * sizeof(Elf64_Phdr));
        if (!ph || ph->p_type != PT_NOTE) continue;
        for (uint64_t at = ph->p_offset; at + sizeof(Elf64_Nhdr) <= ph->p_offset + ph->p_filesz;) {
            const auto nh = read_at<Elf64_Nhdr>(image, at);
            if (!nh) break;
            const uint64_t name_at = at + sizeof(Elf64_Nhdr);
            const uint64_t desc_at = name_at + ((nh->n_namesz + 3) & ~3ULL);
            const uint64_t next = desc_at + ((nh->n_descsz + 3) & ~3ULL);
            if (next > image.size() || next <= at) break;
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && std::memcmp(image.data() + name_at, "GNU", 4) == 0) {
                static constexpr char kHex[] = "0123456789abcdef";
                for (uint64_t k = 0; k < nh->n_descsz; ++k) {
                    const auto b = static_cast<unsigned char>(image[desc_at + k]);
                    out.build_id_ += kHex[b >> 4];
                    out.build_id_ += kHex[b & 15];
                }
                break;
            }
            at = next;
        }
    }
    if (eh->e_shentsize != sizeof(Elf64_Shdr)) return out;
    std::vector<Elf64_Shdr> sections;
    for (uint64_t i = 0; i < eh->e_shnum; ++i) {
        const auto sh = read_at<Elf64_Shdr>(image, eh->e_shoff + i * sizeof(Elf64_Shdr));
        if (!sh) return out;
        sections.push_back(*sh);
    }
    const auto pick = [&](uint32_t type) -> const Elf64_Shdr* {
        for (const auto& s : sections) {
            if (s.sh_type == type) return &s;
        }
        return nullptr;
    };
    const Elf64_Shdr* symtab = pick(SHT_SYMTAB);
    out.full_ = symtab != nullptr;
    if (symtab == nullptr) symtab = pick(SHT_DYNSYM);
    if (symtab == nullptr || symtab->sh_link >= sections.size() || symtab->sh_entsize != sizeof(Elf64_Sym)) return out;
    const Elf64_Shdr& strtab = sections[symtab->sh_link];
    if (strtab.sh_offset > image.size() || image.size() - strtab.sh_offset < strtab.sh_size) return out;
    const auto* strings = reinterpret_cast<const char*>(image.data() + strtab.sh_offset);
    std::vector<Candidate> found;
    for (uint64_t off = 0; off + sizeof(Elf64_Sym) <= symtab->sh_size; off += sizeof(Elf64_Sym)) {
        const auto sym = read_at<Elf64_Sym>(image, symtab->sh_offset + off);
        if (!sym) break;
        const auto type = ELF64_ST_TYPE(sym->st_info);
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym->st_shndx == SHN_UNDEF || sym->st_value == 0) continue;
        if (sym->st_name >= strtab.sh_size) continue;
        const char* name = strings + sym->st_name;
        const size_t len = strnlen(name, strtab.sh_size - sym->st_name);
        if (len == 0) continue;
        found.push_back({{sym->st_value, sym->st_size, std::string(name, len)}, static_cast<unsigned char>(ELF64_ST_BIND(sym->st_info))});
    }
    std::sort(found.begin(), found.end(), [](const Candidate& a, const Candidate& b) { return a.sym.addr < b.sym.addr; });
    for (size_t i = 0; i < found.size();) {
        size_t best = i, j = i + 1;
        for (; j < found.size() && found[j].sym.addr == found[i].sym.addr; ++j) {
            if (better(found[j], found[best])) best = j;
        }
        out.symbols_.push_back(std::move(found[best].sym));
        i = j;
    }
    return out;
}

std::optional<uint64_t> ElfSymbols::address_of_offset(uint64_t offset) const {
    for (const auto& s : segments_) {
        if (offset >= s.offset && offset - s.offset < s.filesz) return offset - s.offset + s.vaddr;
    }
    return std::nullopt;
}

const ElfSymbols::Symbol* ElfSymbols::find(uint64_t addr) const {
    auto it = std::upper_bound(symbols_.begin(), symbols_.end(), addr, [](uint64_t v, const Symbol& s) { return v < s.addr; });
    if (it == symbols_.begin()) return nullptr;
    const auto next = it;
    --it;
    if (it->size > 0) return addr - it->addr < it->size ? &*it : nullptr;
    // No size (hand-written assembly): up to the next symbol, as perf does.
    return next == symbols_.end() || addr < next->addr ? &*it : nullptr;
}

namespace {

ElfSymbols read_elf_file(const std::string& path) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) return {};
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) return {};
    const auto size = static_cast<size_t>(st.st_size);
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
    if (map == MAP_FAILED) return {};
    const auto unmap = [size](void* p) { ::munmap(p, size); };
    std::unique_ptr<void, decltype(unmap)> guard(map, unmap);
    return ElfSymbols::parse(std::span<const std::byte>(static_cast<const std::byte*>(map), size));
}

}  // namespace

ElfSymbols read_elf_symbols(const std::string& path) {
    ElfSymbols elf = read_elf_file(path);
    if (elf.full() || elf.build_id().size() < 4) return elf;
    const std::string& id = elf.build_id();
    ElfSymbols debug = read_elf_file("/usr/lib/debug/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug");
    if (debug.full() && debug.size() > 0) elf.adopt_symbols(std::move(debug));
    return elf;
}

std::string demangle(const std::string& name) {
    if (name.rfind("_Z", 0) != 0) return name;
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> full(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), &std::free);
    if (status != 0 || !full) return name;
    std::string s = full.get();
    if (const size_t p = params_start(s); p != std::string::npos) s.erase(p);
    // A template function's return type comes first ("void std::foo<int>"): drop it at the last space
    // outside brackets, unless that space is part of an operator's name.
    int depth = 0;
    size_t cut = std::string::npos;
    for (size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (c == '<' || c == '(' || c == '[' || c == '{') ++depth;
        else if (c == '>' || c == ')' || c == ']' || c == '}') --depth;
        else if (c == ' ' && depth == 0) cut = i;
    }
    if (cut != std::string::npos && s.find("operator", cut > 8 ? cut - 8 : 0) == std::string::npos) s.erase(0, cut + 1);
    return s;
}

}  // namespace nm::profile

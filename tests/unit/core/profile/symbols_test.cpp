// Kernel symbols from kallsyms text, ELF symbols of this test's own executable, the CPU list.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <sstream>

#include "core/profile/elf_symbols.hpp"
#include "core/profile/kernel_symbols.hpp"
#include "core/profile/perf_sampler.hpp"
#include "core/profile/task_table.hpp"

// Not inlined and not static, so it has its own symbol in .symtab.
extern "C" __attribute__((noinline)) int nm_profile_test_marker(int x) { return x * 3 + 1; }

TEST_CASE("profile kallsyms: text symbols found by address, the name perf would pick at one address, modules", "[unit]") {
    const auto k = nm::profile::KernelSymbols::parse(
        "ffffffff81000000 T _stext\n"
        "ffffffff81000100 t __pfx_tcp_sendmsg\n"
        "ffffffff81000110 T tcp_sendmsg\n"
        "ffffffff81000110 t __tcp_sendmsg_alias\n"
        "ffffffff81000200 D some_data\n"
        "ffffffff81000300 T csum_partial\n"
        "ffffffffc0a01000 t veth_xmit\t[veth]\n");
    CHECK_FALSE(k.addresses_hidden());
    REQUIRE(k.find(0xffffffff81000150) != nullptr);
    CHECK(k.find(0xffffffff81000150)->name == "tcp_sendmsg");
    CHECK(k.find(0xffffffff81000250)->name == "tcp_sendmsg");  // data symbols do not end a function
    CHECK(k.find(0xffffffff81000300)->name == "csum_partial");
    CHECK(k.find(0xffffffffc0a01010)->name == "veth_xmit");
    CHECK(k.find(0xffffffffc0a01010)->module == "veth");
    CHECK(k.find(0xffffffff80ffffff) == nullptr);
    CHECK(k.find(0xffffffffc0a01000 + (2u << 20)) == nullptr);  // far past the last symbol

    const auto hidden = nm::profile::KernelSymbols::parse("0000000000000000 T _stext\n0000000000000000 T tcp_sendmsg\n");
    CHECK(hidden.addresses_hidden());
    CHECK(hidden.find(0x10) == nullptr);
}

TEST_CASE("profile ELF symbols: an address of this executable is named through /proc/self/maps as perf does", "[unit]") {
    REQUIRE(nm_profile_test_marker(2) == 7);
    const auto addr = reinterpret_cast<uint64_t>(&nm_profile_test_marker) + 4;
    std::ifstream in("/proc/self/maps");
    std::ostringstream text;
    text << in.rdbuf();
    const auto maps = nm::profile::parse_proc_maps(text.str());
    const nm::profile::Mapping* m = nullptr;
    for (const auto& x : maps) {
        if (addr >= x.start && addr < x.end) m = &x;
    }
    REQUIRE(m != nullptr);
    const auto elf = nm::profile::read_elf_symbols(m->path);
    REQUIRE(elf.size() > 0);
    const auto in_file = elf.address_of_offset(addr - m->start + m->pgoff);
    REQUIRE(in_file.has_value());
    const auto* sym = elf.find(*in_file);
    REQUIRE(sym != nullptr);
    CHECK(sym->name == "nm_profile_test_marker");
    CHECK(nm::profile::demangle("_ZN2nm7profile10glob_matchESt17basic_string_viewIcSt11char_traitsIcEES4_") == "nm::profile::glob_match");
    CHECK(nm::profile::demangle("plain_c") == "plain_c");
    // Garbage is not an ELF image: an empty table, nothing read outside it.
    const std::vector<std::byte> junk(100, std::byte{0x7f});
    CHECK(nm::profile::ElfSymbols::parse(junk).size() == 0);
}

TEST_CASE("profile CPU list and maps: /sys CPU lists and /proc maps lines parse, only executable file mappings", "[unit]") {
    CHECK(nm::profile::parse_cpu_list("0-3,8,10-11\n") == std::vector<uint32_t>{0, 1, 2, 3, 8, 10, 11});
    CHECK(nm::profile::parse_cpu_list("0\n") == std::vector<uint32_t>{0});
    const auto maps = nm::profile::parse_proc_maps(
        "55d4c8a00000-55d4c8b00000 r-xp 00012000 fd:01 1234   /usr/bin/nicmatrix\n"
        "55d4c8b00000-55d4c8c00000 rw-p 00112000 fd:01 1234   /usr/bin/nicmatrix\n"
        "7ffd1000-7ffd3000 r-xp 00000000 00:00 0                          [vdso]\n");
    REQUIRE(maps.size() == 1);
    CHECK(maps[0].start == 0x55d4c8a00000);
    CHECK(maps[0].pgoff == 0x12000);
    CHECK(maps[0].path == "/usr/bin/nicmatrix");
    CHECK(nm::profile::ring_pages_for(1000, 3.0) == 32);  // 120 kB of 40-byte samples: 32 pages
    CHECK(nm::profile::ring_pages_for(1, 1.0) == 8);
}

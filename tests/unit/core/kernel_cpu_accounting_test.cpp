#include <catch2/catch.hpp>

#include <sys/utsname.h>

#include <fstream>

#include "core/host/kernel_cpu_accounting.hpp"
#include "core/traffic/cpu_codec.hpp"
#include "tests/support/command.hpp"

TEST_CASE("parse_cpu_accounting: tick accounting without IRQ time (this lab's kernel) hides softirq in task time", "[unit]") {
    // Trimmed from a 6.x x86 config: set, "is not set", and options the text does not name at all.
    const char* text =
        "CONFIG_NO_HZ_COMMON=y\n"
        "# CONFIG_NO_HZ_FULL is not set\n"
        "CONFIG_TICK_CPU_ACCOUNTING=y\n"
        "# CONFIG_VIRT_CPU_ACCOUNTING_GEN is not set\n"
        "# CONFIG_IRQ_TIME_ACCOUNTING is not set\n"
        "CONFIG_HAVE_IRQ_TIME_ACCOUNTING=y\n";
    const auto a = nm::parse_cpu_accounting(text, "/proc/config.gz");
    CHECK(a.source == "/proc/config.gz");
    CHECK(a.irq_time == nm::KernelOption::No);
    CHECK(a.cputime == "tick");
    CHECK(a.no_hz_full == nm::KernelOption::No);
    CHECK(a.softirq_in_task_time() == nm::KernelOption::Yes);
    const nm::Json j = a;
    CHECK(j.at("irq_time_accounting") == "no");
    CHECK(j.at("softirq_in_task_time") == "yes");
    CHECK(j.get<nm::CpuAccounting>().cputime == "tick");
}

TEST_CASE("parse_cpu_accounting: IRQ time accounting and full dynticks with exact (gen) accounting", "[unit]") {
    const auto a = nm::parse_cpu_accounting("CONFIG_NO_HZ_FULL=y\nCONFIG_VIRT_CPU_ACCOUNTING_GEN=y\nCONFIG_IRQ_TIME_ACCOUNTING=y\n", "f");
    CHECK(a.irq_time == nm::KernelOption::Yes);
    CHECK(a.cputime == "virt_gen");
    CHECK(a.no_hz_full == nm::KernelOption::Yes);
    CHECK(a.softirq_in_task_time() == nm::KernelOption::No);
    // No config at all: unknown, not "no".
    const nm::CpuAccounting none;
    CHECK(none.softirq_in_task_time() == nm::KernelOption::Unknown);
    CHECK(nm::Json(none).at("source").is_null());
    CHECK(nm::Json(none).at("cputime") == "unknown");
}

TEST_CASE("read_cpu_accounting says which file it read, and agrees with it", "[unit]") {
    const auto a = nm::read_cpu_accounting();
    utsname u{};
    REQUIRE(::uname(&u) == 0);
    const bool boot = std::ifstream(std::string("/boot/config-") + u.release).good();
    const bool proc = std::ifstream("/proc/config.gz").good();
    if (boot) CHECK(a.source == std::string("/boot/config-") + u.release);
    else if (proc) CHECK(a.source == "/proc/config.gz");
    else CHECK(a.source.empty());
    if (a.source.empty()) return;
    // The oracle: zcat/cat and grep on the same file.
    const std::string cat = a.source == "/proc/config.gz" ? "zcat " : "cat ";
    const auto irq = nm::test::run_command(cat + a.source + " | grep -c '^CONFIG_IRQ_TIME_ACCOUNTING=y$'");
    CHECK((a.irq_time == nm::KernelOption::Yes) == (irq.output.rfind('1', 0) == 0));
    const auto tick = nm::test::run_command(cat + a.source + " | grep -c '^CONFIG_TICK_CPU_ACCOUNTING=y$'");
    if (tick.output.rfind('1', 0) == 0) CHECK(a.cputime == "tick");
    else CHECK(a.cputime != "tick");
}

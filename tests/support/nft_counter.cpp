#include "tests/support/nft_counter.hpp"

#include <catch2/catch.hpp>

#include "tests/support/command.hpp"

namespace nm::test {

NftInputCounter::NftInputCounter(std::string netns, std::string table, const std::string& match, const std::string& verdict)
    : netns_(std::move(netns)), table_(std::move(table)) {
    nft("add table inet " + table_);
    nft("add chain inet " + table_ + " input '{ type filter hook input priority 0; }'");
    nft("add rule inet " + table_ + " input " + match + " counter" + (verdict.empty() ? "" : " " + verdict));
}

NftInputCounter::~NftInputCounter() { run_in_netns(netns_, "nft delete table inet " + table_); }

uint64_t NftInputCounter::packets() const {
    const auto r = run_in_netns(netns_, "nft list chain inet " + table_ + " input");
    REQUIRE(r.exit_status == 0);
    const auto at = r.output.find("counter packets ");
    REQUIRE(at != std::string::npos);
    return std::stoull(r.output.substr(at + 16));
}

void NftInputCounter::nft(const std::string& args) const {
    const auto r = run_in_netns(netns_, "nft " + args);
    INFO(r.output);
    REQUIRE(r.exit_status == 0);
}

}  // namespace nm::test

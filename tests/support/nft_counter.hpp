#pragma once
// nftables as a test's oracle inside a lab namespace: one rule on the input hook that counts (and may
// drop) the packets it matches, in a table of its own that is deleted on scope exit.
#include <cstdint>
#include <string>

namespace nm::test {

class NftInputCounter {
public:
    /// Adds table `table` (inet) in `netns` with an input-hook chain holding one rule: `match`, a counter,
    /// then `verdict` ("" = none, "drop"). REQUIREs that nft took each part.
    NftInputCounter(std::string netns, std::string table, const std::string& match, const std::string& verdict = "");
    ~NftInputCounter();
    NftInputCounter(const NftInputCounter&) = delete;
    NftInputCounter& operator=(const NftInputCounter&) = delete;

    /// The rule's counter: the packets it matched so far (`nft list chain`).
    uint64_t packets() const;

private:
    void nft(const std::string& args) const;
    std::string netns_;
    std::string table_;
};

}  // namespace nm::test

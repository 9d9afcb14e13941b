#pragma once
// An impostor or broken peer agent for integration tests: it speaks the agent's protocol on a port in a
// lab namespace and misbehaves as told. It reads the real interface (so a sweep gets as far as its first
// change) and never changes anything: whatever a client believes it applied was never applied.
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "agent/key_file.hpp"

namespace nm::test {

class FakeAgent {
public:
    enum class Mode {
        SkipsAuth,            ///< says it needs no key (auth_required false) yet offers control
        WrongProof,           ///< takes any key, and its own proof is wrong (it does not hold the key)
        TampersApplyReply,    ///< honest handshake; the reply to apply is altered after signing (a bad MAC)
        MalformedApplyReply,  ///< honest handshake; the reply to apply is signed but its report is garbage
    };

    /// Listens on a free port inside `netns`; `ifname` is the interface it claims to control.
    FakeAgent(std::string netns, std::string ifname, SecretKey key, Mode mode);
    ~FakeAgent();
    FakeAgent(const FakeAgent&) = delete;
    FakeAgent& operator=(const FakeAgent&) = delete;

    uint16_t port() const { return port_; }
    /// One line per request it got: the op, and "unsigned" when it carried no MAC.
    std::vector<std::string> requests();

private:
    std::string netns_, ifname_;
    SecretKey key_;
    Mode mode_;
    uint16_t port_ = 0;
    std::mutex mutex_;
    std::vector<std::string> requests_;
    std::jthread thread_;
};

}  // namespace nm::test

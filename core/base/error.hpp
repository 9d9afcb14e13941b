#pragma once
#include <stdexcept>
#include <string>
#include <system_error>

namespace nm {

/// What kind of failure an Error is; the CLI maps it to an exit status (Usage -> 2, the others -> 1).
enum class ErrorKind {
    Usage,    ///< the input is wrong: unknown interface, bad value, bad config
    Refused,  ///< the input is fine but the system would not do it: fixed feature, no permission
    Failed,   ///< something broke while doing it: a socket error, a vanished peer, a timeout
    Closed,   ///< the other end closed the connection (a kind of Failed: exit 1), told apart without reading text
};

/// Where an error happened, for the message: the interface, the setting, the kernel's extended ack.
struct ErrorContext {
    std::string iface;
    std::string setting;
    std::string extack;
};

/// The one exception type below cli/ and bindings/. The message reads like
/// `set mtu=9600 on eth1: Invalid argument (kernel: "mtu greater than device maximum")`.
class Error : public std::runtime_error {
public:
    /// `action` says what was being done ("set mtu=9600", "open netns lab-a"); `code` may be empty.
    Error(ErrorKind kind, std::string action, std::error_code code = {}, ErrorContext context = {});

    ErrorKind kind() const noexcept { return kind_; }
    const std::error_code& code() const noexcept { return code_; }
    const ErrorContext& context() const noexcept { return context_; }
    const std::string& action() const noexcept { return action_; }

private:
    ErrorKind kind_;
    std::string action_;
    std::error_code code_;
    ErrorContext context_;
};

/// A usage error with a complete message.
[[nodiscard]] Error usage_error(std::string message);

/// A Failed error from an errno value (pass errno itself, read right after the failing call).
[[nodiscard]] Error system_error(std::string action, int errnum, ErrorContext context = {});

/// Builds the text of an Error; exposed so the bindings and tests format identically.
std::string format_error(const std::string& action, const std::error_code& code, const ErrorContext& context);

}  // namespace nm

#include "core/base/error.hpp"

namespace nm {

std::string format_error(const std::string& action, const std::error_code& code, const ErrorContext& context) {
    std::string text = action;
    if (!context.iface.empty()) text += " on " + context.iface;
    if (code) text += ": " + code.message();
    if (!context.extack.empty()) text += " (kernel: \"" + context.extack + "\")";
    return text;
}

Error::Error(ErrorKind kind, std::string action, std::error_code code, ErrorContext context)
    : std::runtime_error(format_error(action, code, context)), kind_(kind), action_(std::move(action)), code_(code), context_(std::move(context)) {}

Error usage_error(std::string message) { return Error(ErrorKind::Usage, std::move(message)); }

Error system_error(std::string action, int errnum, ErrorContext context) {
    // Permission problems are refusals, not breakage: the user can fix them by running as root.
    const auto kind = (errnum == EPERM || errnum == EACCES) ? ErrorKind::Refused : ErrorKind::Failed;
    return Error(kind, std::move(action), std::error_code(errnum, std::generic_category()), std::move(context));
}

}  // namespace nm

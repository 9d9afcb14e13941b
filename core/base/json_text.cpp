#include "core/base/json_text.hpp"

#include "core/base/error.hpp"

namespace nm {

Json parse_json_text(const std::string& text, const std::string& source) {
    try {
        return Json::parse(text);
    } catch (const Json::exception& e) {
        std::string what = e.what();
        if (const auto at = what.find("parse error"); at != std::string::npos) {
            what = what.substr(at);
        } else if (const auto end = what.find("] "); end != std::string::npos) {
            what = what.substr(end + 2);
        }
        throw usage_error(source + ": not valid JSON: " + what);
    }
}

}  // namespace nm

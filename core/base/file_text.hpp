#pragma once
// Reading a whole small file as text: /proc and /sys files, logs, pid files, a results file.
#include <string>

namespace nm {

/// The text of the file at `path`, byte for byte; "" when it cannot be opened or read (a /proc file of a
/// process that is gone, a log not written yet). For a file whose absence is an error, check first.
std::string read_file_text(const std::string& path);

}  // namespace nm

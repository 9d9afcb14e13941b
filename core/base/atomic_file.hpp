#pragma once
// Writing a file so that after a crash at any moment it is either the old file or the new one, never a
// torn one, and so that nobody can make us write somewhere else: the journal and the results files.
#include <sys/types.h>

#include <string>

namespace nm {

/// Writes `text` to a fresh temporary file next to `path` (mkostemp: O_CREAT|O_EXCL, so a planted file or
/// symbolic link is never opened), fsyncs it, gives it `mode`, renames it over `path` (which replaces a
/// symbolic link at `path` instead of following it), then fsyncs the directory. The temporary file is
/// removed on every failure. Throws nm::Error naming the file and the errno.
void write_file_atomically(const std::string& path, const std::string& text, mode_t mode);

/// Creates `dir` and its missing parents with `mode` (like mkdir -p). Throws nm::Error naming the
/// directory and the errno (a file in the way, no permission).
void make_directories(const std::string& dir, mode_t mode = 0755);

/// The directory part of `path`: "." for a bare name, "/" for a file in the root.
std::string parent_directory(const std::string& path);

}  // namespace nm

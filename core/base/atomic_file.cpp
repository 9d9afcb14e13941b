#include "core/base/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <vector>

#include "core/base/error.hpp"
#include "core/base/unique_fd.hpp"

namespace nm {
namespace {

void write_all(int fd, const std::string& text, const std::string& path) {
    size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw system_error("write " + path, errno);
        }
        done += static_cast<size_t>(n);
    }
}

}  // namespace

std::string parent_directory(const std::string& path) {
    const auto slash = path.rfind('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

void make_directories(const std::string& dir, mode_t mode) {
    if (dir.empty() || dir == "/" || dir == ".") return;
    struct stat st {};
    if (::stat(dir.c_str(), &st) == 0) {
        if (!S_ISDIR(st.st_mode)) throw system_error("create directory " + dir, ENOTDIR);
        return;
    }
    make_directories(parent_directory(dir), mode);
    if (::mkdir(dir.c_str(), mode) != 0 && errno != EEXIST) throw system_error("create directory " + dir, errno);
}

void write_file_atomically(const std::string& path, const std::string& text, mode_t mode) {
    const std::string dir = parent_directory(path);
    std::string name = path + ".tmp.XXXXXX";
    std::vector<char> tmpl(name.begin(), name.end());
    tmpl.push_back('\0');
    UniqueFd fd(::mkostemp(tmpl.data(), O_CLOEXEC));
    if (!fd) throw system_error("create " + name, errno);
    const std::string tmp(tmpl.data());
    try {
        write_all(fd.get(), text, tmp);
        if (::fchmod(fd.get(), mode) != 0) throw system_error("chmod " + tmp, errno);
        if (::fsync(fd.get()) != 0) throw system_error("fsync " + tmp, errno);
        fd.reset();
        if (::rename(tmp.c_str(), path.c_str()) != 0) throw system_error("rename " + tmp + " to " + path, errno);
    } catch (...) {
        ::unlink(tmp.c_str());
        throw;
    }
    // The rename is durable only once the directory entry is on disk.
    UniqueFd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dfd) throw system_error("open directory " + dir, errno);
    if (::fsync(dfd.get()) != 0) throw system_error("fsync directory " + dir, errno);
}

}  // namespace nm

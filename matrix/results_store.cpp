#include "matrix/results_store.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/base/error.hpp"
#include "core/base/json_codec.hpp"
#include "core/base/unique_fd.hpp"
#include "matrix/stats.hpp"

namespace nm {
namespace {

void write_all(int fd, const std::string& data, const std::string& path) {
    size_t done = 0;
    while (done < data.size()) {
        const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw system_error("write results " + path, errno);
        }
        done += static_cast<size_t>(n);
    }
}

// Files written before the median's interval was recorded have only the mean's: compute it from the
// runs they keep, at the confidence the sweep would have used.
void fill_median_intervals(ResultsFile& results) {
    const double confidence = results.run.config.precision ? results.run.config.precision->confidence : 95;
    for (auto& cell : results.cells) {
        for (auto& [metric, summary] : cell.summary) {
            if (summary.median_ci_confidence || summary.n < 2) continue;
            const auto values = metric_values(cell.runs, metric);
            if (values.size() != summary.n) continue;
            const auto fresh = summarize(values, confidence);
            summary.median_ci_low = fresh.median_ci_low;
            summary.median_ci_high = fresh.median_ci_high;
            summary.median_ci_confidence = fresh.median_ci_confidence;
        }
    }
}

}  // namespace

void save_results(const ResultsFile& results, const std::string& path) {
    const std::filesystem::path target(path);
    const auto dir = target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    const std::string text = Json(results).dump(1) + "\n";
    try {
        {
            UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
            if (!fd) throw system_error("create " + tmp, errno);
            write_all(fd.get(), text, tmp);
            if (::fsync(fd.get()) != 0) throw system_error("fsync " + tmp, errno);
        }
        if (::rename(tmp.c_str(), path.c_str()) != 0) throw system_error("rename " + tmp + " to " + path, errno);
    } catch (...) {
        ::unlink(tmp.c_str());
        throw;
    }
    // The rename is durable only once the directory entry is on disk.
    UniqueFd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dfd) ::fsync(dfd.get());
}

ResultsFile load_results(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw usage_error(path + ": cannot read the results file (no such file, or no permission)");
    std::ostringstream text;
    text << in.rdbuf();
    try {
        auto results = Json::parse(text.str()).get<ResultsFile>();
        fill_median_intervals(results);
        return results;
    } catch (const Json::exception& e) {
        throw usage_error(path + ": not a nicmatrix results file: " + e.what());
    } catch (const Error& e) {
        throw usage_error(path + ": " + e.what());
    }
}

void check_resumable(const ResultsFile& existing, const SweepConfig& config, const std::string& path) {
    const Json before = existing.run.config;
    const Json now = config;
    if (before == now) return;
    std::string first = "the config";
    for (const auto& [key, value] : now.items()) {
        if (!before.contains(key) || before.at(key) != value) {
            first = "\"" + key + "\"";
            break;
        }
    }
    throw usage_error("--resume " + path + ": the file was made with a different sweep config (" + first +
                      " differs); resume with the config it was made with, or start a new file");
}

}  // namespace nm

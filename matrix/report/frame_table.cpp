#include "matrix/report/frame_table.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "core/base/error.hpp"

namespace nm {
namespace {

std::string fixed(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

std::string pct(double v) { return fixed(v, v < 10 ? 2 : 1) + "%"; }

const std::vector<std::string> kHeader = {"frame size", "% of line rate", "frames/s", "Mbit/s", "CPU (sender/receiver/softirq)", "loss", "trials"};

std::vector<std::string> cells_of(const FrameTableRow& r) { return {r.frame, r.line_pct, r.fps, r.mbps, r.cpu, r.loss, r.trials}; }

}  // namespace

FrameTable build_frame_table(const Rfc2544Result& result) {
    FrameTable t;
    std::vector<const FrameRow*> order;
    for (const auto& r : result.rows) order.push_back(&r);
    // Single sizes first in the order asked, mixes last (the way the tables are posted).
    std::stable_partition(order.begin(), order.end(), [](const FrameRow* r) { return r->payload_mix.size() <= 1; });
    for (const FrameRow* r : order) {
        FrameTableRow row;
        row.frame = r->frame;
        const std::string trials = std::to_string(r->trials) + (r->confirmation ? "+1" : "");
        if (!r->error.empty()) {
            row.line_pct = row.fps = row.mbps = row.cpu = row.loss = "-";
            row.trials = trials;
            t.notes.push_back(r->frame + ": failed: " + r->error);
            t.rows.push_back(row);
            continue;
        }
        if (r->found) {
            row.line_pct = pct(r->line_rate_pct);
            row.fps = fixed(r->throughput_fps, 0);
            row.mbps = fixed(r->layer2_bps / 1e6, 2);
            row.cpu = fixed(r->cpu_sender_pct, 0) + "/" + fixed(r->cpu_receiver_pct, 0) + "/" + fixed(r->softirq_pct, 0) + "%";
            row.loss = pct(r->loss_pct);
            if (r->confirmation)
                row.loss += std::string(" (") + (r->confirmed ? "confirmed " : "NOT confirmed ") + pct(r->confirmation->loss_pct) + ")";
        } else {
            row.line_pct = "0%";
            row.fps = row.mbps = row.cpu = "-";
            row.loss = r->history.empty() ? "-" : pct(r->history.back().loss_pct);
            t.notes.push_back(r->frame + ": no trial passed (loss at every rate tried)");
        }
        row.trials = trials;
        if (r->generator_limited) {
            t.notes.push_back(r->frame + ": limited by the generator, which sent at most " + fixed(r->generator_max_fps, 0) + " frames/s (" +
                              pct(100.0 * r->generator_max_fps / r->line_rate_fps) + " of line rate)");
        }
        if (r->confirmation && !r->confirmed)
            t.notes.push_back(r->frame + ": the confirmation trial at the reported rate lost more than the tolerance");
        t.rows.push_back(row);
    }
    t.notes.insert(t.notes.begin(), "line rate " + fixed(result.line_rate_bps / 1e6, 0) + " Mbit/s (" +
                                        (result.line_rate_source == "configured" ? "configured" : "link speed") + "); loss tolerance " +
                                        pct(result.spec.loss_tolerance_pct) + "; trials of " + fixed(result.spec.trial_s, 2) + " s, resolution " +
                                        pct(result.spec.resolution_pct) + "; CPU: engine % of one core, softirq % of all cores (receiver's side)");
    if (result.interrupted) t.notes.push_back("interrupted: rows not shown were not measured");
    return t;
}

std::string render_frame_table(const FrameTable& table, TableFormat format) {
    std::ostringstream o;
    if (format == TableFormat::Csv) {
        o << "frame_size,line_rate_pct,frames_per_s,mbit_per_s,cpu_sender_receiver_softirq,loss,trials\n";
        for (const auto& r : table.rows) {
            const auto c = cells_of(r);
            for (size_t i = 0; i < c.size(); ++i) o << (i ? "," : "") << '"' << c[i] << '"';
            o << '\n';
        }
        return o.str();
    }
    if (format == TableFormat::Markdown) {
        o << "|";
        for (const auto& h : kHeader) o << ' ' << h << " |";
        o << "\n|";
        for (size_t i = 0; i < kHeader.size(); ++i) o << (i == 0 ? " --- |" : " ---: |");
        o << '\n';
        for (const auto& r : table.rows) {
            o << "|";
            for (const auto& c : cells_of(r)) o << ' ' << c << " |";
            o << '\n';
        }
        o << '\n';
        for (const auto& n : table.notes) o << "- " << n << '\n';
        return o.str();
    }
    std::vector<size_t> width;
    width.reserve(kHeader.size());
    for (const auto& h : kHeader) width.push_back(h.size());
    for (const auto& r : table.rows) {
        const auto c = cells_of(r);
        for (size_t i = 0; i < c.size(); ++i) width[i] = std::max(width[i], c[i].size());
    }
    const auto line = [&](const std::vector<std::string>& c) {
        for (size_t i = 0; i < c.size(); ++i) {
            const std::string pad(width[i] - c[i].size(), ' ');
            o << (i ? "  " : "") << (i == 0 ? c[i] + pad : pad + c[i]);
        }
        o << '\n';
    };
    line(kHeader);
    size_t total = 0;
    for (size_t w : width) total += w + 2;
    o << std::string(total - 2, '-') << '\n';
    for (const auto& r : table.rows) line(cells_of(r));
    o << '\n';
    for (const auto& n : table.notes) o << "  " << n << '\n';
    return o.str();
}

std::string render_results(const ResultsFile& results, const std::string& metric, TableFormat format) {
    if (format == TableFormat::JsonDocument)
        throw usage_error("--format json: only compare and report --against print JSON; the results file is JSON already");
    std::string out;
    const bool ordinary =
        std::any_of(results.run.config.traffic.begin(), results.run.config.traffic.end(), [](const TrafficEntry& t) { return !t.rfc2544; });
    if (ordinary || results.cells.empty()) out += render_matrix(build_matrix(results, metric), format);
    for (const auto& c : results.cells) {
        if (!c.spec.traffic.rfc2544) continue;
        if (!out.empty()) out += '\n';
        const std::string title = c.spec.key + " (" + status_name(c.status) + (c.error.empty() ? "" : ": " + c.error) + ")";
        if (format == TableFormat::Markdown) out += "### " + title + "\n\n";
        else if (format == TableFormat::Csv) out += "# " + title + "\n";
        else out += title + "\n";
        if (c.rfc2544) out += render_frame_table(build_frame_table(*c.rfc2544), format);
    }
    return out;
}

}  // namespace nm

#include "matrix/report/table.hpp"

#include <algorithm>

#include "core/base/error.hpp"

namespace nm {
namespace {

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

// Columns are aligned by what a terminal shows: UTF-8 continuation bytes ("≈" is three bytes) take no room.
size_t display_width(const std::string& s) {
    return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

}  // namespace

std::string render_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                         const std::vector<std::string>& notes, TableFormat format) {
    std::string out;
    if (format == TableFormat::Csv) {
        const auto line = [&](const std::vector<std::string>& row) {
            for (size_t i = 0; i < row.size(); ++i) {
                if (i) out += ',';
                out += csv_field(row[i]);
            }
            out += '\n';
        };
        line(header);
        for (const auto& row : rows) line(row);
        return out;
    }
    if (format == TableFormat::Markdown) {
        const auto line = [&](const std::vector<std::string>& row) {
            out += "|";
            for (const auto& c : row) out += " " + c + " |";
            out += '\n';
        };
        line(header);
        out += "|";
        for (size_t i = 0; i < header.size(); ++i) out += i == 0 ? " --- |" : " ---: |";
        out += '\n';
        for (const auto& row : rows) line(row);
        if (!notes.empty()) out += '\n';
        for (const auto& n : notes) out += "- " + n + '\n';
        return out;
    }
    std::vector<size_t> width(header.size(), 0);
    const auto measure = [&](const std::vector<std::string>& row) {
        for (size_t i = 0; i < row.size() && i < width.size(); ++i) width[i] = std::max(width[i], display_width(row[i]));
    };
    measure(header);
    for (const auto& row : rows) measure(row);
    const auto line = [&](const std::vector<std::string>& row) {
        std::string text;
        for (size_t i = 0; i < row.size(); ++i) {
            const std::string pad(width[i] - display_width(row[i]), ' ');
            // First column left-aligned (labels), the others right-aligned (numbers).
            text += (i ? "  " : "") + (i == 0 ? row[i] + pad : pad + row[i]);
        }
        while (!text.empty() && text.back() == ' ') text.pop_back();
        out += text + '\n';
    };
    line(header);
    size_t total = 0;
    for (size_t w : width) total += w + 2;
    out += std::string(total > 2 ? total - 2 : 0, '-') + '\n';
    for (const auto& row : rows) line(row);
    if (!notes.empty()) out += '\n';
    for (const auto& n : notes) out += "  " + n + '\n';
    return out;
}

TableFormat parse_table_format(const std::string& name) {
    if (name == "table" || name == "text") return TableFormat::Text;
    if (name == "md" || name == "markdown") return TableFormat::Markdown;
    if (name == "csv") return TableFormat::Csv;
    if (name == "json") return TableFormat::JsonDocument;
    throw usage_error("--format: expected table, md, csv or json, got \"" + name + "\"");
}

}  // namespace nm

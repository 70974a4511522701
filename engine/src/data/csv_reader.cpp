#include "data/csv_reader.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "accum/errors.h"

namespace accum {

namespace {

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) return {};
    const auto e = s.find_last_not_of(" \t\r");
    return s.substr(b, e - b + 1);
}

// Splits one CSV record; supports double-quoted fields with "" escapes.
std::vector<std::string> split_fields(const std::string& line) {
    std::vector<std::string> fields;
    std::string cur;
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (quoted) {
            if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
                cur += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                cur += c;
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            fields.push_back(trim(cur));
            cur.clear();
        } else {
            cur += c;
        }
    }
    fields.push_back(trim(cur));
    return fields;
}

bool parse_float(const std::string& text, double& value) {
    if (text.empty()) return false;
    const char* begin = text.data();
    const char* end = text.data() + text.size();
    if (*begin == '+') ++begin;
    const auto result = std::from_chars(begin, end, value);
    return result.ec == std::errc() && result.ptr == end;
}

} // namespace

CsvTable parse_csv(const std::string& text, const std::string& label_column, const std::string& source) {
    std::istringstream in(text);
    std::string line;
    std::int64_t line_number = 0;
    std::vector<std::string> header;
    while (std::getline(in, line)) {
        ++line_number;
        if (!trim(line).empty()) {
            header = split_fields(line);
            break;
        }
    }
    if (header.empty()) throw corrupt_data(source, "empty file (expected a header row and data rows)");
    const auto label_it = std::find(header.begin(), header.end(), label_column);
    if (label_it == header.end()) {
        std::string names;
        for (const auto& h : header) names += (names.empty() ? "" : ", ") + h;
        throw DataError(make_message(message_code::csv_no_label_column, {{"path", source},
                                                                          {"line", std::to_string(line_number)},
                                                                          {"column", label_column},
                                                                          {"columns", names}}));
    }
    if (header.size() < 2) throw corrupt_data(source, "needs at least one feature column besides the label");
    const std::size_t label_index = static_cast<std::size_t>(label_it - header.begin());

    CsvTable table;
    for (std::size_t i = 0; i < header.size(); ++i)
        if (i != label_index) table.feature_names.push_back(header[i]);

    std::vector<std::string> raw_labels;
    while (std::getline(in, line)) {
        ++line_number;
        if (trim(line).empty()) continue;
        const auto fields = split_fields(line);
        if (fields.size() != header.size())
            throw DataError(make_message(message_code::csv_field_count, {{"path", source},
                                                                      {"line", std::to_string(line_number)},
                                                                      {"expected", std::to_string(header.size())},
                                                                      {"found", std::to_string(fields.size())}}));
        for (std::size_t i = 0; i < fields.size(); ++i) {
            if (i == label_index) {
                if (fields[i].empty())
                    throw bad_data_line(source, line_number, "empty label in column '" + label_column + "'");
                raw_labels.push_back(fields[i]);
                continue;
            }
            double v = 0;
            if (!parse_float(fields[i], v))
                throw DataError(make_message(message_code::csv_not_a_number, {{"path", source},
                                                                           {"line", std::to_string(line_number)},
                                                                           {"column", header[i]},
                                                                           {"value", fields[i]}}));
            if (!std::isfinite(v))
                throw bad_data_line(source, line_number,
                                    "column '" + header[i] + "' value '" + fields[i] + "' is not finite");
            if (!std::isfinite(static_cast<float>(v)))
                throw bad_data_line(source, line_number,
                                    "column '" + header[i] + "' value '" + fields[i] +
                                        "' is out of range for 32-bit floats");
            table.features.push_back(static_cast<float>(v));
        }
        ++table.rows;
    }
    if (table.rows == 0) throw corrupt_data(source, "header only, no data rows");

    // Labels: whole numbers keep their order; any other text is a class name.
    bool all_integers = true;
    for (const auto& l : raw_labels) {
        std::int64_t v = 0;
        const auto r = std::from_chars(l.data(), l.data() + l.size(), v);
        if (r.ec != std::errc() || r.ptr != l.data() + l.size() || v < 0 || v > 100000) {
            all_integers = false;
            break;
        }
    }
    std::map<std::string, std::int64_t> index;
    if (all_integers) {
        std::vector<std::int64_t> values;
        for (const auto& l : raw_labels) values.push_back(std::stoll(l));
        std::vector<std::int64_t> distinct = values;
        std::sort(distinct.begin(), distinct.end());
        distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
        for (std::size_t i = 0; i < distinct.size(); ++i) {
            table.class_names.push_back(std::to_string(distinct[i]));
            index[std::to_string(distinct[i])] = static_cast<std::int64_t>(i);
        }
        for (const auto v : values) table.labels.push_back(index[std::to_string(v)]);
    } else {
        std::vector<std::string> distinct = raw_labels;
        std::sort(distinct.begin(), distinct.end());
        distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
        for (std::size_t i = 0; i < distinct.size(); ++i) index[distinct[i]] = static_cast<std::int64_t>(i);
        table.class_names = distinct;
        for (const auto& l : raw_labels) table.labels.push_back(index[l]);
    }
    return table;
}

CsvTable read_csv_file(const std::string& path, const std::string& label_column) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw DataError(make_message(message_code::data_cannot_open, {{"path", path}, {"reason", std::strerror(errno)}}));
    std::ostringstream buffer;
    buffer << in.rdbuf();
    return parse_csv(buffer.str(), label_column, path);
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later

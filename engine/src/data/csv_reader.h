#pragma once
// Numeric CSV with a header row and a label column. Torch-free.

#include <cstdint>
#include <string>
#include <vector>

namespace accum {

struct CsvTable {
    std::vector<std::string> feature_names;
    std::vector<float> features;            // row-major, rows × feature_names.size()
    std::vector<std::int64_t> labels;       // class index per row
    std::vector<std::string> class_names;   // label text per class index
    std::int64_t rows = 0;
};

// Parses CSV text. `source` names the file in errors ("file.csv:12: ...").
// Throws DataError on: no header, header only, unknown label column, a row with
// too few or too many fields, a non-numeric or non-finite feature value.
CsvTable parse_csv(const std::string& text, const std::string& label_column, const std::string& source);
CsvTable read_csv_file(const std::string& path, const std::string& label_column);

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later

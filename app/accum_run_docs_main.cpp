// SPDX-License-Identifier: GPL-3.0-or-later
// accum-run-docs: writes accum-run's manual page or bash completion from its
// option table (runner/cli_options.cpp), at build time; not installed.
//
//   accum-run-docs man OUTPUT DATE SOURCE [EXTRA]   EXTRA: hand-written roff sections appended
//   accum-run-docs bash OUTPUT
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "runner/cli_options.h"

namespace {

bool write(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) std::cerr << "accum-run-docs: cannot write " << path << "\n";
    return static_cast<bool>(out);
}

} // namespace

int main(int argc, char** argv) {
    const std::string format = argc > 1 ? argv[1] : "";
    if (format == "bash" && argc == 3) return write(argv[2], accum::cli::bash_completion(accum::cli::program_doc())) ? 0 : 1;
    if (format == "man" && (argc == 5 || argc == 6)) {
        std::string extra;
        if (argc == 6) {
            std::ifstream in(argv[5], std::ios::binary);
            if (!in) {
                std::cerr << "accum-run-docs: cannot read " << argv[5] << "\n";
                return 1;
            }
            std::ostringstream s;
            s << in.rdbuf();
            extra = s.str();
        }
        return write(argv[2], accum::cli::manual_page(accum::cli::program_doc(), argv[3], argv[4], extra)) ? 0 : 1;
    }
    std::cerr << "usage: accum-run-docs man OUTPUT DATE SOURCE [EXTRA] | accum-run-docs bash OUTPUT\n";
    return 2;
}

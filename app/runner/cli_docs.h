// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A program's command line as data (synopsis, description, options, exit codes)
// and what is made from it: the manual page (roff) and the bash completion. The
// programs fill it from the option tables their parsers read, so the parser,
// --help, the page and the completion cannot disagree. Torch-free and Qt-free.

#include <string>
#include <utility>
#include <vector>

namespace accum::cli {

struct OptionDoc {
    enum class Complete { Nothing, File, Directory };
    std::vector<std::string> names;  // "h", "help": one letter is -h, longer is --help; none: a positional
    std::string metavar;             // the value's placeholder ("B", "FILE"); "" for a switch
    std::string help;
    std::vector<std::string> values; // the values the completion offers (an enumerated option)
    Complete complete = Complete::Nothing; // what else it completes: file or directory names
    std::string file_extension;      // with Complete::File, only names ending .EXT (and directories)
};

struct OptionSection {
    std::string title; // "Options", "Arguments"
    std::string note;  // a sentence under the title, or ""
    std::vector<OptionDoc> options;
};

struct ProgramDoc {
    std::string name;                    // accum-run
    std::string summary;                 // the manual's NAME line, after "name \-"
    std::vector<std::string> synopsis;   // each a usage line, after the program's name
    std::vector<std::string> commands;   // words completed first (train, plan, …)
    std::vector<std::string> description; // paragraphs
    std::vector<OptionSection> sections;
    std::vector<std::pair<int, std::string>> exit_codes; // code, meaning
};

// Section 1 manual page. `extra`: hand-written roff sections appended (EXAMPLES, FILES, …).
std::string manual_page(const ProgramDoc& doc, const std::string& date, const std::string& source,
                        const std::string& extra);
// A completion function for bash-completion (_init_completion), for every option of every section.
std::string bash_completion(const ProgramDoc& doc);

} // namespace accum::cli

// SPDX-License-Identifier: GPL-3.0-or-later
#include "runner/cli_docs.h"

#include <cctype>
#include <sstream>

namespace accum::cli {

namespace {

// Text as roff reads it: a backslash printed, an option's hyphens as minus signs
// ("--batch-size", "-h"; a word's own hyphen stays one), no line that starts a
// request (a leading "." or "'").
std::string roff(const std::string& text) {
    std::string out;
    bool in_option = false; // inside "--batch-size": every hyphen a minus
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        const char before = i == 0 ? ' ' : text[i - 1];
        const char after = i + 1 < text.size() ? text[i + 1] : ' ';
        const bool starts_word = before == ' ' || before == '(' || before == '/' || before == '|' || before == '[' ||
                                 before == '\n' || before == '`' || i == 0;
        if (c == '-' && starts_word &&
            (after == '-' || std::isalpha(static_cast<unsigned char>(after)) || after == '?'))
            in_option = true; // "--batch-size", "-h"
        else if (c != '-' && !std::isalnum(static_cast<unsigned char>(c)))
            in_option = false;
        if (c == '\\') out += "\\e";
        else if (c == '-' && in_option) out += "\\-";
        else out += c;
    }
    std::string lines;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);)
        lines += (line.empty() || (line[0] != '.' && line[0] != '\'') ? "" : "\\&") + line + "\n";
    return lines;
}

std::string option_spelling(const std::string& name) { return (name.size() == 1 ? "-" : "--") + name; }

// "\fB\-h\fR, \fB\-\-help\fR", "\fB\-\-batch\-size\fR \fIB\fR", "\fIrun-dir\fR".
std::string tag(const OptionDoc& o) {
    std::string out;
    for (const auto& n : o.names) {
        std::string minus;
        for (const char c : option_spelling(n)) minus += c == '-' ? "\\-" : std::string(1, c);
        out += (out.empty() ? "" : ", ") + std::string("\\fB") + minus + "\\fR";
    }
    if (!o.metavar.empty()) {
        std::string arg = roff(o.metavar);
        arg.pop_back(); // its newline
        out += (out.empty() ? "" : " ") + std::string("\\fI") + arg + "\\fR";
    }
    return out;
}

std::string upper(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

std::string joined(const std::vector<std::string>& words, const char* between) {
    std::string out;
    for (const auto& w : words) out += (out.empty() ? "" : between) + w;
    return out;
}

} // namespace

std::string manual_page(const ProgramDoc& doc, const std::string& date, const std::string& source,
                        const std::string& extra) {
    std::ostringstream out;
    out << ".\\\" Generated from " << doc.name << "'s option table when " << doc.name << " was built; do not edit.\n"
        << ".TH " << upper(doc.name) << " 1 \"" << date << "\" \"" << source << "\" \"User Commands\"\n"
        << ".nh\n.ad l\n" // technical words: no hyphenation, no stretched lines
        << ".SH NAME\n"
        << doc.name << " \\- " << roff(doc.summary) << ".SH SYNOPSIS\n";
    for (std::size_t i = 0; i < doc.synopsis.size(); ++i)
        out << (i > 0 ? ".br\n" : "") << ".B " << doc.name << "\n" << roff(doc.synopsis[i]);
    out << ".SH DESCRIPTION\n";
    for (std::size_t i = 0; i < doc.description.size(); ++i) out << (i > 0 ? ".PP\n" : "") << roff(doc.description[i]);
    for (const auto& section : doc.sections) {
        if (section.options.empty()) continue;
        out << ".SH " << upper(section.title) << "\n";
        if (!section.note.empty()) { // a sentence under the title: "Also read from …."
            std::string note = section.note;
            note[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(note[0])));
            out << roff(note.back() == '.' ? note : note + ".");
        }
        for (const auto& o : section.options) out << ".TP\n" << tag(o) << "\n" << roff(o.help);
    }
    if (!doc.exit_codes.empty()) {
        out << ".SH \"EXIT STATUS\"\n";
        for (const auto& [code, meaning] : doc.exit_codes) out << ".TP\n.B " << code << "\n" << roff(meaning);
    }
    out << extra;
    return out.str();
}

std::string bash_completion(const ProgramDoc& doc) {
    std::string fn;
    for (const char c : doc.name) fn += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    std::vector<std::string> all, free, files, dirs;
    std::string cases;
    for (const auto& section : doc.sections)
        for (const auto& o : section.options) {
            std::vector<std::string> spellings;
            for (const auto& n : o.names) spellings.push_back(option_spelling(n));
            if (spellings.empty()) continue; // a positional argument
            all.insert(all.end(), spellings.begin(), spellings.end());
            if (o.metavar.empty()) continue; // a switch: the next word is anything
            const std::string pattern = joined(spellings, "|");
            if (!o.values.empty() || !o.file_extension.empty()) {
                cases += "        " + pattern + ")\n";
                if (!o.values.empty())
                    cases += "            COMPREPLY=($(compgen -W '" + joined(o.values, " ") + "' -- \"$cur\"))\n";
                if (o.complete == OptionDoc::Complete::File)
                    cases += "            _filedir" + (o.file_extension.empty() ? "" : " '" + o.file_extension + "'") + "\n";
                cases += "            return\n            ;;\n";
            } else if (o.complete == OptionDoc::Complete::File) {
                files.push_back(pattern);
            } else if (o.complete == OptionDoc::Complete::Directory) {
                dirs.push_back(pattern);
            } else {
                free.push_back(pattern);
            }
        }
    if (!files.empty()) cases += "        " + joined(files, "|") + ")\n            _filedir\n            return\n            ;;\n";
    if (!dirs.empty()) cases += "        " + joined(dirs, "|") + ")\n            _filedir -d\n            return\n            ;;\n";
    if (!free.empty())
        cases += "        " + joined(free, "|") + ")\n            return # a number, a size or a name: nothing to offer\n"
                 "            ;;\n";

    std::ostringstream out;
    out << "# bash completion for " << doc.name << "                          -*- shell-script -*-\n"
        << "# Generated from " << doc.name << "'s option table when " << doc.name << " was built; do not edit.\n\n"
        << "_" << fn << "()\n{\n    local cur prev words cword split\n    _init_completion -s || return\n\n"
        << "    case $prev in\n" << cases << "    esac\n    $split && return\n\n"
        << "    if [[ $cur == -* ]]; then\n        COMPREPLY=($(compgen -W '" << joined(all, " ")
        << "' -- \"$cur\"))\n        return\n    fi\n";
    if (!doc.commands.empty())
        out << "    if ((cword == 1)); then\n        COMPREPLY=($(compgen -W '" << joined(doc.commands, " ")
            << "' -- \"$cur\"))\n    fi\n";
    out << "} &&\n    complete -F _" << fn << " " << doc.name << "\n\n# ex: filetype=sh\n";
    return out.str();
}

} // namespace accum::cli

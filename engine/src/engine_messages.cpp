#include "accum/engine_messages.h"

namespace accum {

namespace {

bool is_name_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; }

// Renders text[pos, …) up to the end, or (inside a select) up to its '|' or
// '}', which it leaves at pos. `depth` bounds the nesting of {@code} messages.
std::string render(std::string_view text, std::size_t& pos, const std::map<std::string, std::string>& args,
                   bool in_select, int depth);

std::string argument(const std::map<std::string, std::string>& args, const std::string& name) {
    const auto it = args.find(name);
    return it == args.end() ? std::string() : it->second;
}

// text[pos] is '{'. Renders the placeholder and moves pos past its '}'.
std::string placeholder(std::string_view text, std::size_t& pos, const std::map<std::string, std::string>& args,
                        int depth) {
    const std::size_t open = pos++;
    const bool nested = pos < text.size() && text[pos] == '@';
    if (nested) ++pos;
    const std::size_t name_start = pos;
    while (pos < text.size() && is_name_char(text[pos])) ++pos;
    const std::string name(text.substr(name_start, pos - name_start));
    if (name.empty() || pos >= text.size()) { // not a placeholder: the brace as it is
        pos = open + 1;
        return "{";
    }
    if (text[pos] == '}' && !nested) {
        ++pos;
        return argument(args, name);
    }
    if (text[pos] == '}' && nested) {
        ++pos;
        const auto* row = depth < 4 ? find_message_template(argument(args, name)) : nullptr;
        if (!row) return {};
        std::size_t inner = 0;
        return render(row->english, inner, args, false, depth + 1);
    }
    if (text[pos] == '?' && !nested) {
        ++pos;
        const bool present = !argument(args, name).empty();
        std::string when = render(text, pos, args, true, depth), otherwise;
        if (pos < text.size() && text[pos] == '|') {
            ++pos;
            otherwise = render(text, pos, args, true, depth);
        }
        if (pos < text.size() && text[pos] == '}') ++pos;
        return present ? when : otherwise;
    }
    pos = open + 1;
    return "{";
}

std::string render(std::string_view text, std::size_t& pos, const std::map<std::string, std::string>& args,
                   bool in_select, int depth) {
    std::string out;
    while (pos < text.size()) {
        const char c = text[pos];
        if (in_select && (c == '|' || c == '}')) break;
        if (c == '{') {
            out += placeholder(text, pos, args, depth);
            continue;
        }
        out += c;
        ++pos;
    }
    return out;
}

} // namespace

const MessageTemplate* find_message_template(std::string_view code) {
    if (code.empty()) return nullptr;
    for (const auto& row : message_templates)
        if (code == row.code) return &row;
    return nullptr;
}

std::string render_template(std::string_view text, const std::map<std::string, std::string>& args) {
    std::size_t pos = 0;
    return render(text, pos, args, false, 0);
}

std::string english_text(const EngineMessage& message) {
    const auto* row = find_message_template(message.code);
    return row ? render_template(row->english, message.args) : std::string();
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later

// SPDX-License-Identifier: GPL-3.0-or-later
// Reading a lesson file (docs/lessons.md). The file is JSON, read by a small
// parser of its own that keeps the line of every value, so that every refusal
// names the line and the field; the run's settings go through the engine's own
// reader of accum-run's --config (accum::from_json_text), so a lesson speaks
// the same option names and gets the same checks.

#include <QFile>
#include <QFileInfo>
#include <algorithm>
#include <cmath>
#include <cstring>

#include "lesson.h"

namespace studio {

namespace {

struct Refusal {
    int line = 0;
    QString field;
    QString reason;
};

struct Node {
    enum class Type { Null, Boolean, Number, String, Array, Object };
    Type type = Type::Null;
    int line = 0;
    int begin = 0, end = 0; // the value's bytes in the file
    bool boolean = false;
    double number = 0.0;
    QString string;
    std::vector<Node> items;
    std::vector<std::pair<QString, Node>> members;

    const Node* member(const char* key) const {
        for (const auto& [k, v] : members)
            if (k == QLatin1String(key)) return &v;
        return nullptr;
    }
};

QString type_name(Node::Type type) {
    switch (type) {
    case Node::Type::Null: return QStringLiteral("null");
    case Node::Type::Boolean: return QStringLiteral("true or false");
    case Node::Type::Number: return QStringLiteral("a number");
    case Node::Type::String: return QStringLiteral("text");
    case Node::Type::Array: return QStringLiteral("a list [ … ]");
    case Node::Type::Object: return QStringLiteral("an object { … }");
    }
    return {};
}

// JSON (RFC 8259) with each value's line; the field being read names a syntax error.
class Parser {
public:
    explicit Parser(const QByteArray& text) : s_(text) {}

    Node document() {
        skip_space();
        Node root = value(QString());
        skip_space();
        if (pos_ < s_.size()) fail(QString(), QStringLiteral("text after the lesson's closing }"));
        return root;
    }

private:
    [[noreturn]] void fail(const QString& field, const QString& reason) const {
        throw Refusal{line_, field.isEmpty() ? QStringLiteral("(the file)") : field, reason};
    }
    char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
    void advance() {
        if (s_[pos_] == '\n') ++line_;
        ++pos_;
    }
    void skip_space() {
        while (pos_ < s_.size() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) advance();
    }
    QString found() const {
        if (pos_ >= s_.size()) return QStringLiteral("the end of the file");
        return QStringLiteral("'%1'").arg(QString::fromUtf8(s_.mid(pos_, 1)));
    }
    void expect(char c, const QString& field, const char* what) {
        skip_space();
        if (peek() != c)
            fail(field, QStringLiteral("not JSON: expected %1, found %2").arg(QLatin1String(what), found()));
        advance();
    }

    Node value(const QString& field) {
        skip_space();
        Node n;
        n.line = line_;
        n.begin = pos_;
        const char c = peek();
        if (c == '{') {
            n.type = Node::Type::Object;
            advance();
            skip_space();
            if (peek() == '}') {
                advance();
            } else {
                for (;;) {
                    skip_space();
                    if (peek() != '"')
                        fail(field, QStringLiteral("not JSON: expected a field name in quotes, found %1").arg(found()));
                    const QString key = string(field);
                    const QString path = field.isEmpty() ? key : field + QLatin1Char('.') + key;
                    for (const auto& m : n.members)
                        if (m.first == key) fail(path, QStringLiteral("appears twice"));
                    expect(':', path, "':'");
                    n.members.emplace_back(key, value(path));
                    skip_space();
                    if (peek() == ',') {
                        advance();
                        continue;
                    }
                    expect('}', path, "',' or '}'");
                    break;
                }
            }
        } else if (c == '[') {
            n.type = Node::Type::Array;
            advance();
            skip_space();
            if (peek() == ']') {
                advance();
            } else {
                for (;;) {
                    n.items.push_back(value(QStringLiteral("%1[%2]").arg(field).arg(n.items.size() + 1)));
                    skip_space();
                    if (peek() == ',') {
                        advance();
                        continue;
                    }
                    expect(']', field, "',' or ']'");
                    break;
                }
            }
        } else if (c == '"') {
            n.type = Node::Type::String;
            n.string = string(field);
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            n.type = Node::Type::Number;
            n.number = number(field);
        } else if (word("true")) {
            n.type = Node::Type::Boolean;
            n.boolean = true;
        } else if (word("false")) {
            n.type = Node::Type::Boolean;
        } else if (!word("null")) {
            fail(field, QStringLiteral("not JSON: expected a value, found %1").arg(found()));
        }
        n.end = pos_;
        return n;
    }

    bool word(const char* w) {
        const auto len = static_cast<qsizetype>(std::strlen(w));
        if (s_.mid(pos_, len) != w) return false;
        pos_ += len;
        return true;
    }

    double number(const QString& field) {
        const int start = pos_;
        auto digits = [this] {
            const int from = pos_;
            while (peek() >= '0' && peek() <= '9') advance();
            return pos_ > from;
        };
        if (peek() == '-') advance();
        if (!digits()) fail(field, QStringLiteral("not JSON: a number needs digits"));
        if (peek() == '.') {
            advance();
            if (!digits()) fail(field, QStringLiteral("not JSON: a number needs digits after '.'"));
        }
        if (peek() == 'e' || peek() == 'E') {
            advance();
            if (peek() == '+' || peek() == '-') advance();
            if (!digits()) fail(field, QStringLiteral("not JSON: a number needs digits after 'e'"));
        }
        bool ok = false;
        const double v = s_.mid(start, pos_ - start).toDouble(&ok);
        if (!ok || !std::isfinite(v)) fail(field, QStringLiteral("the number is out of range"));
        return v;
    }

    int hex4(const QString& field) {
        int v = 0;
        for (int i = 0; i < 4; ++i) {
            const char c = peek();
            const int d = c >= '0' && c <= '9'   ? c - '0'
                          : c >= 'a' && c <= 'f' ? c - 'a' + 10
                          : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                 : -1;
            if (d < 0) fail(field, QStringLiteral("not JSON: \\u needs four hexadecimal digits"));
            v = v * 16 + d;
            advance();
        }
        return v;
    }

    QString string(const QString& field) {
        advance(); // the opening quote
        QByteArray bytes;
        QString out;
        auto flush = [&] {
            out += QString::fromUtf8(bytes);
            bytes.clear();
        };
        for (;;) {
            if (pos_ >= s_.size()) fail(field, QStringLiteral("not JSON: the text has no closing quote"));
            const char c = peek();
            if (c == '"') {
                advance();
                break;
            }
            if (c == '\n' || c == '\r')
                fail(field, QStringLiteral("not JSON: the text has no closing quote on its line"));
            if (static_cast<unsigned char>(c) < 0x20)
                fail(field, QStringLiteral("not JSON: a control character inside quotes (write \\t)"));
            if (c != '\\') {
                bytes += c;
                advance();
                continue;
            }
            advance();
            const char e = peek();
            advance();
            switch (e) {
            case '"': bytes += '"'; break;
            case '\\': bytes += '\\'; break;
            case '/': bytes += '/'; break;
            case 'b': bytes += '\b'; break;
            case 'f': bytes += '\f'; break;
            case 'n': bytes += '\n'; break;
            case 'r': bytes += '\r'; break;
            case 't': bytes += '\t'; break;
            case 'u': {
                flush();
                char32_t code = char32_t(hex4(field));
                if (code >= 0xD800 && code < 0xDC00 && word("\\u")) {
                    const auto low = char32_t(hex4(field));
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                }
                out += QString::fromUcs4(&code, 1);
                break;
            }
            default: fail(field, QStringLiteral("not JSON: unknown escape \\%1").arg(QLatin1Char(e)));
            }
        }
        flush();
        return out;
    }

    const QByteArray& s_;
    int pos_ = 0;
    int line_ = 1;
};

// ------------------------------------------------------------ the lesson

[[noreturn]] void refuse(const Node& at, const QString& field, const QString& reason) {
    throw Refusal{at.line, field, reason};
}

QString join(const QStringList& names) { return names.join(QStringLiteral(", ")); }

void allow_only(const Node& object, const QString& field, const QStringList& allowed) {
    for (const auto& [key, value] : object.members)
        if (!allowed.contains(key))
            refuse(value, field.isEmpty() ? key : field + QLatin1Char('.') + key,
                   QStringLiteral("unknown field (a %1 has %2)")
                       .arg(field.isEmpty() ? QStringLiteral("lesson") : QStringLiteral("step"), join(allowed)));
}

const Node& require(const Node& object, const char* key, const QString& field) {
    const Node* n = object.member(key);
    const QString path = field.isEmpty() ? QLatin1String(key) : field + QLatin1Char('.') + QLatin1String(key);
    if (!n) refuse(object, path, QStringLiteral("missing"));
    return *n;
}

void expect_type(const Node& n, Node::Type type, const QString& field) {
    if (n.type != type) refuse(n, field, QStringLiteral("must be %1, not %2").arg(type_name(type), type_name(n.type)));
}

QString text_value(const Node& n, const QString& field) {
    expect_type(n, Node::Type::String, field);
    if (n.string.trimmed().isEmpty()) refuse(n, field, QStringLiteral("is empty"));
    return n.string;
}

LessonText read_text(const Node& n, const QString& field, const QStringList& languages) {
    expect_type(n, Node::Type::Object, field);
    LessonText text;
    for (const auto& [code, value] : n.members) {
        if (!languages.contains(code))
            refuse(value, field + QLatin1Char('.') + code,
                   QStringLiteral("is not one of the lesson's languages (%1)").arg(join(languages)));
        text.by_language.emplace_back(code, text_value(value, field + QLatin1Char('.') + code));
    }
    for (const auto& code : languages)
        if (!n.member(code.toUtf8().constData()))
            refuse(n, field + QLatin1Char('.') + code, QStringLiteral("missing: the text in \"%1\"").arg(code));
    return text;
}

// The engine's option name for a key as accum::set_option reads it.
QString option_name(QString key) {
    key.replace(QLatin1Char('_'), QLatin1Char('-'));
    if (key == QLatin1String("learning-rate")) key = QStringLiteral("lr");
    if (key == QLatin1String("gradient-accumulation-steps")) key = QStringLiteral("accumulation-steps");
    return key;
}

// Refuses the engine's `problem` at the key of `config` it names (accum-run's
// option names, '_' spellings and aliases included), else at `at`.
[[noreturn]] void refuse_config(const Node* config, const Node& at, const QString& field,
                                const accum::ConfigProblem& problem) {
    const QString option = QString::fromStdString(problem.option);
    if (config)
        for (const auto& [key, value] : config->members)
            if (option_name(key) == option)
                refuse(value, field + QLatin1Char('.') + key, QString::fromStdString(problem.message));
    refuse(at, field, QString::fromStdString(problem.to_string()));
}

// `config`'s keys on top of `base`, through accum-run's own --config reader.
accum::RunConfig apply_config(const QByteArray& file, const Node& config, const QString& field,
                              const accum::RunConfig& base) {
    expect_type(config, Node::Type::Object, field);
    std::vector<accum::ConfigProblem> problems;
    const auto text = file.mid(config.begin, config.end - config.begin).toStdString();
    const auto result = accum::from_json_text(text, base, problems);
    if (!problems.empty()) refuse_config(&config, config, field, problems.front());
    return result;
}

template <typename T>
T choice(const Node& n, const QString& field, const std::vector<std::pair<const char*, T>>& choices) {
    expect_type(n, Node::Type::String, field);
    QStringList names;
    for (const auto& [name, value] : choices) {
        if (n.string == QLatin1String(name)) return value;
        names << QLatin1String(name);
    }
    refuse(n, field, QStringLiteral("unknown value \"%1\" (choose %2)").arg(n.string, join(names)));
}

MemoryLever read_lever(const Node& n, const QString& field) {
    return choice<MemoryLever>(n, field,
                               {{"planner", MemoryLever::Planner},
                                {"accumulation", MemoryLever::Accumulation},
                                {"checkpointing", MemoryLever::Checkpointing}});
}

std::function<LessonVerdict(const std::vector<RunResult>&)> read_check(const Node& n, const QString& field) {
    expect_type(n, Node::Type::Object, field);
    const Node& kind_node = require(n, "kind", field);
    const QString kind_field = field + QStringLiteral(".kind");
    expect_type(kind_node, Node::Type::String, kind_field);
    const CheckKind* kind = nullptr;
    QStringList names;
    for (const auto& k : check_kinds()) {
        if (kind_node.string == QLatin1String(k.name)) kind = &k;
        names << QLatin1String(k.name);
    }
    if (!kind)
        refuse(kind_node, kind_field,
               QStringLiteral("unknown check \"%1\" (known: %2)").arg(kind_node.string, join(names)));
    CheckParameters parameters = kind->defaults;
    QStringList takes;
    for (const auto& [name, value] : kind->defaults) takes << QString::fromStdString(name);
    for (const auto& [key, value] : n.members) {
        if (key == QLatin1String("kind")) continue;
        const QString path = field + QLatin1Char('.') + key;
        const auto it = parameters.find(key.toStdString());
        if (it == parameters.end())
            refuse(value, path,
                   QStringLiteral("unknown field (the check \"%1\" takes %2)")
                       .arg(kind_node.string, takes.isEmpty() ? QStringLiteral("no parameters") : join(takes)));
        expect_type(value, Node::Type::Number, path);
        if (value.number < 0) refuse(value, path, QStringLiteral("must not be negative"));
        it->second = value.number;
    }
    return [check = kind->check, parameters](const std::vector<RunResult>& runs) { return check(runs, parameters); };
}

LessonStep read_step(const QByteArray& file, const Node& n, const QString& field, const QStringList& languages,
                     const accum::RunConfig& base, MemoryLever lever, const QStringList& keys) {
    expect_type(n, Node::Type::Object, field);
    allow_only(n, field, {"key", "title", "text", "run", "focus", "config", "check", "measured", "lever", "note"});
    LessonStep step;
    step.line = n.line;
    const Node& key = require(n, "key", field);
    const QString key_text = text_value(key, field + QStringLiteral(".key"));
    if (keys.contains(key_text))
        refuse(key, field + QStringLiteral(".key"), QStringLiteral("\"%1\" names an earlier step too").arg(key_text));
    step.key_storage = std::make_shared<const std::string>(key_text.toStdString());
    step.key = step.key_storage->c_str();
    step.title = read_text(require(n, "title", field), field + QStringLiteral(".title"), languages);
    step.text = read_text(require(n, "text", field), field + QStringLiteral(".text"), languages);

    const Node& run = require(n, "run", field);
    const QString run_field = field + QStringLiteral(".run");
    expect_type(run, Node::Type::String, run_field);
    if (run.string == QLatin1String("live")) {
        step.run = LessonRun::Live;
    } else if (const auto* info = find_experiment(run.string)) {
        step.run = LessonRun::Experiment;
        step.experiment = info->experiment;
    } else {
        QStringList names{QStringLiteral("live")};
        for (const auto& e : experiments()) names << QLatin1String(e.id);
        refuse(run, run_field, QStringLiteral("unknown run \"%1\" (choose %2)").arg(run.string, join(names)));
    }
    if (const Node* focus = n.member("focus")) {
        if (step.run != LessonRun::Live)
            refuse(*focus, field + QStringLiteral(".focus"), QStringLiteral("only a live step has a focus"));
        step.focus = choice<LiveFocus>(
            *focus, field + QStringLiteral(".focus"),
            {{"balanced", LiveFocus::Balanced}, {"memory", LiveFocus::Memory}, {"code", LiveFocus::Code}});
    }

    accum::RunConfig config = base;
    if (const Node* c = n.member("config")) config = apply_config(file, *c, field + QStringLiteral(".config"), base);
    if (const auto problems = accum::validate(config); !problems.empty()) {
        const Node* c = n.member("config");
        refuse_config(c, c ? *c : n, field + QStringLiteral(".config"), problems.front());
    }
    step.config = [config] { return config; };
    step.check = read_check(require(n, "check", field), field + QStringLiteral(".check"));
    if (const Node* m = n.member("measured")) {
        const QString m_field = field + QStringLiteral(".measured");
        expect_type(*m, Node::Type::String, m_field);
        QStringList names;
        for (const auto& [name, sentence] : measured_kinds()) {
            if (m->string == QLatin1String(name)) step.measured = sentence;
            names << QLatin1String(name);
        }
        if (!step.measured)
            refuse(*m, m_field, QStringLiteral("unknown figures \"%1\" (known: %2)").arg(m->string, join(names)));
    }
    step.lever = lever;
    if (const Node* l = n.member("lever")) step.lever = read_lever(*l, field + QStringLiteral(".lever"));
    return step;
}

Lesson read_lesson(const QByteArray& file, const Node& root) {
    expect_type(root, Node::Type::Object, QStringLiteral("(the file)"));
    allow_only(root, QString(), {"format", "title", "languages", "lever", "config", "steps", "note"});
    const Node& format = require(root, "format", QString());
    expect_type(format, Node::Type::Number, QStringLiteral("format"));
    if (format.number != 1) refuse(format, QStringLiteral("format"), QStringLiteral("this studio reads format 1"));

    Lesson lesson;
    const Node& languages = require(root, "languages", QString());
    expect_type(languages, Node::Type::Array, QStringLiteral("languages"));
    if (languages.items.empty()) refuse(languages, QStringLiteral("languages"), QStringLiteral("names no language"));
    for (std::size_t i = 0; i < languages.items.size(); ++i) {
        const QString f = QStringLiteral("languages[%1]").arg(i + 1);
        const QString code = text_value(languages.items[i], f);
        if (lesson.languages.contains(code)) refuse(languages.items[i], f, QStringLiteral("\"%1\" twice").arg(code));
        lesson.languages << code;
    }
    lesson.title = read_text(require(root, "title", QString()), QStringLiteral("title"), lesson.languages);
    const MemoryLever lever =
        root.member("lever") ? read_lever(*root.member("lever"), QStringLiteral("lever")) : MemoryLever::Planner;
    accum::RunConfig base;
    if (const Node* c = root.member("config")) base = apply_config(file, *c, QStringLiteral("config"), base);

    const Node& steps = require(root, "steps", QString());
    expect_type(steps, Node::Type::Array, QStringLiteral("steps"));
    if (steps.items.empty()) refuse(steps, QStringLiteral("steps"), QStringLiteral("has no step"));
    QStringList keys;
    for (std::size_t i = 0; i < steps.items.size(); ++i) {
        lesson.steps.push_back(read_step(file, steps.items[i], QStringLiteral("steps[%1]").arg(i + 1), lesson.languages,
                                         base, lever, keys));
        keys << QLatin1String(lesson.steps.back().key);
    }
    return lesson;
}

} // namespace

std::optional<Lesson> parse_lesson(const QByteArray& text, const QString& name, QString* error) {
    try {
        const Node root = Parser(text).document();
        Lesson lesson = read_lesson(text, root);
        lesson.file = name;
        return lesson;
    } catch (const Refusal& r) {
        if (error)
            *error = QStringLiteral("%1, line %2: %3: %4")
                         .arg(QFileInfo(name).fileName())
                         .arg(r.line)
                         .arg(r.field, r.reason);
        return std::nullopt;
    }
}

std::optional<Lesson> read_lesson_file(const QString& path, QString* error) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        if (error) *error = QStringLiteral("%1: %2").arg(path, file.errorString());
        return std::nullopt;
    }
    return parse_lesson(file.readAll(), path, error);
}

} // namespace studio

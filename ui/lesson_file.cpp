// SPDX-License-Identifier: GPL-3.0-or-later
// Reading a lesson file (docs/lessons.md). The file is JSON, read by nlohmann's
// parser into a tree that keeps the line of every value, so that every refusal
// names the line and the field; the run's settings go through the engine's own
// reader of accum-run's --config (accum::read_config_text), so a lesson speaks
// the same option names and gets the same checks.

#include <QFileInfo>
#include <algorithm>
#include <cmath>
#include <iterator>
#include <nlohmann/json.hpp>

#include "accum/config_text.h"
#include "accum/option_table.h"
#include "lesson_reader.h"

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

    // Declared here, defined below: pair<QString, Node> needs Node whole first (clang).
    Node();
    Node(const Node&);
    Node(Node&&) noexcept;
    Node& operator=(const Node&);
    Node& operator=(Node&&) noexcept;
    ~Node();
    const Node* member(const char* key) const;
};

Node::Node() = default;
Node::Node(const Node&) = default;
Node::Node(Node&&) noexcept = default;
Node& Node::operator=(const Node&) = default;
Node& Node::operator=(Node&&) noexcept = default;
Node::~Node() = default;

const Node* Node::member(const char* key) const {
    for (const auto& [k, v] : members)
        if (k == QLatin1String(key)) return &v;
    return nullptr;
}

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

// JSON through nlohmann's SAX parser, built into Nodes that keep each value's
// line. The parser reads the file through Tracked, which notes how many bytes
// it has taken: when an event arrives, the value's last byte (or an object's
// '{') is the last non-blank one taken, as the lexer reads a number one byte
// past its end and nothing past any other token.
class Tracked {
public:
    using iterator_category = std::input_iterator_tag;
    using value_type = char;
    using difference_type = std::ptrdiff_t;
    using pointer = const char*;
    using reference = const char&;

    Tracked(const char* p, const char** taken) : p_(p), taken_(taken) {}
    reference operator*() const {
        *taken_ = p_ + 1;
        return *p_;
    }
    Tracked& operator++() {
        ++p_;
        return *this;
    }
    Tracked operator++(int) {
        Tracked before = *this;
        ++p_;
        return before;
    }
    bool operator==(const Tracked& other) const { return p_ == other.p_; }
    bool operator!=(const Tracked& other) const { return p_ != other.p_; }

private:
    const char* p_;
    const char** taken_;
};

// Deeper than a lesson ever nests: refused before the tree's recursion could matter.
constexpr std::size_t kMaxDepth = 64;

class TreeBuilder : public nlohmann::json_sax<nlohmann::json> {
public:
    explicit TreeBuilder(const QByteArray& text) : text_(text), taken_(text.constData()) {
        for (qsizetype i = 0; i < text.size(); ++i)
            if (text[i] == '\n') newlines_.push_back(int(i));
    }
    const char** taken() { return &taken_; }
    Node& root() { return root_; }

    bool null() override { return scalar(Node{}); }
    bool boolean(bool v) override {
        Node n;
        n.type = Node::Type::Boolean;
        n.boolean = v;
        return scalar(std::move(n));
    }
    bool number_integer(number_integer_t v) override { return number(double(v)); }
    bool number_unsigned(number_unsigned_t v) override { return number(double(v)); }
    bool number_float(number_float_t v, const string_t&) override { return number(v); }
    bool string(string_t& v) override {
        Node n;
        n.type = Node::Type::String;
        n.string = QString::fromStdString(v);
        return scalar(std::move(n));
    }
    bool binary(binary_t&) override { return false; } // JSON text has none
    bool start_object(std::size_t) override { return open(Node::Type::Object); }
    bool start_array(std::size_t) override { return open(Node::Type::Array); }
    bool end_object() override { return close(); }
    bool end_array() override { return close(); }
    bool key(string_t& k) override {
        Frame& f = frames_.back();
        f.key = QString::fromStdString(k);
        for (const auto& m : f.node->members)
            if (m.first == f.key) throw Refusal{line(), child_field(), QStringLiteral("appears twice")};
        return true;
    }
    bool parse_error(std::size_t position, const std::string& last_token,
                     const nlohmann::detail::exception& ex) override {
        throw Refusal{line_of(int(std::min<std::size_t>(position, std::size_t(text_.size())))), error_field(),
                      syntax_reason(ex, last_token)};
    }

private:
    struct Frame {
        Node* node;
        QString field;
        QString key; // the member being read, in an object
    };

    // The line of the last non-blank byte taken before `end`.
    int line_of(int end) const {
        int at = end - 1;
        while (at > 0 && (text_[at] == ' ' || text_[at] == '\t' || text_[at] == '\n' || text_[at] == '\r')) --at;
        return 1 + int(std::lower_bound(newlines_.begin(), newlines_.end(), std::max(at, 0)) - newlines_.begin());
    }
    int offset() const { return int(taken_ - text_.constData()); }
    int line() const { return line_of(offset()); }

    // The field of the value being read now: the member's, the next item's, or the file's.
    QString child_field() const {
        if (frames_.empty()) return QString();
        const Frame& f = frames_.back();
        if (f.node->type == Node::Type::Array)
            return QStringLiteral("%1[%2]").arg(f.field).arg(f.node->items.size() + 1);
        return f.field.isEmpty() ? f.key : f.field + QLatin1Char('.') + f.key;
    }
    // A syntax error names the member last read, else the container.
    QString error_field() const {
        if (frames_.empty()) return QStringLiteral("(the file)");
        const Frame& f = frames_.back();
        if (f.node->type == Node::Type::Object && !f.key.isEmpty()) return child_field();
        return f.field.isEmpty() ? QStringLiteral("(the file)") : f.field;
    }

    Node* place(Node&& n) {
        n.line = line();
        if (frames_.empty()) {
            root_ = std::move(n);
            return &root_;
        }
        Node* parent = frames_.back().node;
        if (parent->type == Node::Type::Array) {
            parent->items.push_back(std::move(n));
            return &parent->items.back();
        }
        parent->members.emplace_back(frames_.back().key, std::move(n));
        return &parent->members.back().second;
    }
    bool scalar(Node&& n) {
        n.begin = n.end = offset();
        place(std::move(n));
        return true;
    }
    bool number(double v) {
        Node n;
        n.type = Node::Type::Number;
        n.number = v;
        return scalar(std::move(n));
    }
    bool open(Node::Type type) {
        const QString field = child_field();
        if (frames_.size() >= kMaxDepth)
            throw Refusal{line(), field.isEmpty() ? QStringLiteral("(the file)") : field,
                          QStringLiteral("nested deeper than %1 levels").arg(kMaxDepth)};
        Node n;
        n.type = type;
        n.begin = offset() - 1; // the '{' or '['
        frames_.push_back({place(std::move(n)), field, QString()});
        return true;
    }
    bool close() {
        frames_.back().node->end = offset();
        frames_.pop_back();
        return true;
    }

    // nlohmann's reason, said as the field's problem.
    static QString syntax_reason(const nlohmann::detail::exception& ex, const std::string& last_token) {
        const std::string what = ex.what();
        const auto has = [&what](const char* part) { return what.find(part) != std::string::npos; };
        const QString found = last_token.empty() || has("unexpected end of input")
                                  ? QStringLiteral("the end of the file")
                                  : QStringLiteral("'%1'").arg(QString::fromStdString(last_token));
        if (ex.id == 406) return QStringLiteral("the number is out of range");
        if (has("; expected end of input")) return QStringLiteral("text after the lesson's closing }");
        if (has("U+000A") || has("U+000D")) return QStringLiteral("not JSON: the text has no closing quote on its line");
        if (has("missing closing quote")) return QStringLiteral("not JSON: the text has no closing quote");
        if (has("while parsing object key"))
            return QStringLiteral("not JSON: expected a field name in quotes, found %1").arg(found);
        if (has("while parsing object separator")) return QStringLiteral("not JSON: expected ':', found %1").arg(found);
        if (has("while parsing object -")) return QStringLiteral("not JSON: expected ',' or '}', found %1").arg(found);
        if (has("while parsing array -")) return QStringLiteral("not JSON: expected ',' or ']', found %1").arg(found);
        if (has("expected '[', '{', or a literal"))
            return QStringLiteral("not JSON: expected a value, found %1").arg(found);
        // The lexer's own reason (an invalid string, number or literal).
        const auto dash = what.find(" - ");
        return QStringLiteral("not JSON: ") +
               QString::fromStdString(dash == std::string::npos ? what : what.substr(dash + 3));
    }

    const QByteArray& text_;
    const char* taken_;
    std::vector<int> newlines_;
    Node root_;
    std::vector<Frame> frames_;
};

Node document(const QByteArray& text) {
    TreeBuilder builder(text);
    const char* data = text.constData();
    nlohmann::json::sax_parse(Tracked(data, builder.taken()), Tracked(data + text.size(), builder.taken()), &builder);
    return std::move(builder.root());
}

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

// The engine's option name for a key as accum::set_option reads it ('_'
// spellings and aliases, from the option table); the key itself if it is none.
QString option_name(const QString& key) {
    const accum::OptionRow* row = accum::find_option_key(key.toStdString());
    return row ? QString::fromStdString(row->name) : key;
}

// Refuses the engine's `problem` at the key of `config` it names (accum-run's
// option names, '_' spellings and aliases included, or the TrainingArguments
// field its message starts with), else at `at`.
[[noreturn]] void refuse_config(const Node* config, const Node& at, const QString& field,
                                const accum::ConfigProblem& problem) {
    const QString option = QString::fromStdString(problem.option);
    const QString message = QString::fromStdString(problem.message);
    if (config)
        for (const auto& [key, value] : config->members)
            if (key == option || option_name(key) == option ||
                message.startsWith(QStringLiteral("TrainingArguments' %1 ").arg(key)))
                refuse(value, field + QLatin1Char('.') + key, QString::fromStdString(problem.message));
    refuse(at, field, QString::fromStdString(problem.to_string()));
}

// The settings of `owner` (the lesson or a step) on top of `base`, through
// accum-run's own --config reader: "config" holds accum-run's options, and
// "training-arguments" a TrainingArguments file, read whole with Transformers'
// defaults for what it leaves out. One or the other, never both; a field of
// TrainingArguments among the options is refused by name.
struct Settings {
    const Node* node = nullptr; // the "config" or "training-arguments" object, if any
    QString field;
    accum::RunConfig config;
};

Settings read_settings(const QByteArray& file, const Node& owner, const QString& prefix, const accum::RunConfig& base) {
    const auto path = [&prefix](const char* key) {
        return prefix.isEmpty() ? QLatin1String(key) : prefix + QLatin1Char('.') + QLatin1String(key);
    };
    Settings s{owner.member("config"), path("config"), base};
    auto form = accum::ConfigTextForm::Options;
    if (const Node* arguments = owner.member("training-arguments")) {
        if (s.node)
            refuse(*arguments, path("training-arguments"),
                   QStringLiteral("a %1 has config (accum-run's options) or training-arguments (a TrainingArguments "
                                  "file), not both")
                       .arg(prefix.isEmpty() ? QStringLiteral("lesson") : QStringLiteral("step")));
        s = {arguments, path("training-arguments"), base};
        form = accum::ConfigTextForm::TrainingArguments;
    }
    if (!s.node) return s;
    expect_type(*s.node, Node::Type::Object, s.field);
    std::vector<accum::ConfigProblem> problems;
    std::vector<std::string> ignored;
    const auto text = file.mid(s.node->begin, s.node->end - s.node->begin).toStdString();
    s.config = accum::read_config_text(text, base, form, problems, ignored);
    if (!problems.empty()) refuse_config(s.node, *s.node, s.field, problems.front());
    return s;
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

std::function<LessonVerdict(const std::vector<RunResult>&)> read_check(const Node& n, const QString& field,
                                                                       const std::vector<CheckKind>& kinds) {
    expect_type(n, Node::Type::Object, field);
    const Node& kind_node = require(n, "kind", field);
    const QString kind_field = field + QStringLiteral(".kind");
    expect_type(kind_node, Node::Type::String, kind_field);
    const CheckKind* kind = nullptr;
    QStringList names;
    for (const auto& k : kinds) {
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

// A compare-accumulation step's shapes: [[32, 1], [8, 4], [4, 8]], each a
// micro-batch and its K, the first the reference the others are measured against.
std::vector<std::pair<std::int64_t, std::int64_t>> read_shapes(const Node& n, const QString& field,
                                                               const LessonStep& step) {
    if (step.run != LessonRun::Experiment || step.experiment != Experiment::CompareAccumulation)
        refuse(n, field, QStringLiteral("only a compare-accumulation step has shapes"));
    expect_type(n, Node::Type::Array, field);
    if (n.items.size() < 2 || n.items.size() > 6)
        refuse(n, field, QStringLiteral("must name 2 to 6 shapes, not %1").arg(n.items.size()));
    std::vector<std::pair<std::int64_t, std::int64_t>> shapes;
    for (std::size_t i = 0; i < n.items.size(); ++i) {
        const Node& shape = n.items[i];
        const QString f = QStringLiteral("%1[%2]").arg(field).arg(i + 1);
        expect_type(shape, Node::Type::Array, f);
        std::int64_t v[2] = {0, 0};
        for (std::size_t j = 0; j < 2 && j < shape.items.size(); ++j) {
            const Node& x = shape.items[j];
            expect_type(x, Node::Type::Number, QStringLiteral("%1[%2]").arg(f).arg(j + 1));
            if (x.number < 1 || x.number > 65536 || x.number != std::floor(x.number))
                refuse(x, QStringLiteral("%1[%2]").arg(f).arg(j + 1),
                       QStringLiteral("must be a whole number from 1 to 65536"));
            v[j] = std::int64_t(x.number);
        }
        if (shape.items.size() != 2)
            refuse(shape, f, QStringLiteral("must be [micro-batch, accumulation steps], two numbers"));
        shapes.emplace_back(v[0], v[1]);
    }
    return shapes;
}

LessonStep read_step(const QByteArray& file, const Node& n, const QString& field, const QStringList& languages,
                     const accum::RunConfig& base, MemoryLever lever, const QStringList& keys,
                     const LessonVocabulary& vocabulary) {
    expect_type(n, Node::Type::Object, field);
    allow_only(n, field,
               {"key", "title", "text", "run", "focus", "config", "training-arguments", "shapes", "check", "measured",
                "lever", "note"});
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

    const Settings settings = read_settings(file, n, field, base);
    if (const auto problems = accum::validate(settings.config); !problems.empty())
        refuse_config(settings.node, settings.node ? *settings.node : n, settings.field, problems.front());
    step.config = [config = settings.config] { return config; };
    if (const Node* shapes = n.member("shapes")) step.shapes = read_shapes(*shapes, field + QStringLiteral(".shapes"), step);
    step.check = read_check(require(n, "check", field), field + QStringLiteral(".check"), vocabulary.checks);
    if (const Node* m = n.member("measured")) {
        const QString m_field = field + QStringLiteral(".measured");
        expect_type(*m, Node::Type::String, m_field);
        QStringList names;
        for (const auto& [name, sentence] : vocabulary.measured) {
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

Lesson read_lesson(const QByteArray& file, const Node& root, const LessonVocabulary& vocabulary) {
    expect_type(root, Node::Type::Object, QStringLiteral("(the file)"));
    allow_only(root, QString(),
               {"format", "title", "languages", "lever", "config", "training-arguments", "steps", "note"});
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
    const accum::RunConfig base = read_settings(file, root, QString(), accum::RunConfig{}).config;

    const Node& steps = require(root, "steps", QString());
    expect_type(steps, Node::Type::Array, QStringLiteral("steps"));
    if (steps.items.empty()) refuse(steps, QStringLiteral("steps"), QStringLiteral("has no step"));
    QStringList keys;
    for (std::size_t i = 0; i < steps.items.size(); ++i) {
        lesson.steps.push_back(read_step(file, steps.items[i], QStringLiteral("steps[%1]").arg(i + 1), lesson.languages,
                                         base, lever, keys, vocabulary));
        keys << QLatin1String(lesson.steps.back().key);
    }
    return lesson;
}

} // namespace

std::optional<Lesson> parse_lesson_with(const QByteArray& text, const QString& name,
                                        const LessonVocabulary& vocabulary, QString* error) {
    try {
        const Node root = document(text);
        Lesson lesson = read_lesson(text, root, vocabulary);
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

} // namespace studio

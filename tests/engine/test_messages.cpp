// The engine's messages as codes with arguments (accum/engine_messages.h). For
// real runs that end each way — out of memory under a budget (each suggestion),
// diverged, data missing or corrupt, an invalid option, stopped, completed — the
// summary carries a code from the table, and that code's English rendering with
// the summary's arguments IS the summary's message. The message is also the text
// accum-run printed before the codes existed: `before_codes()` below rebuilds it
// the way session.cpp concatenated it then, from the same facts.
#include <QtTest/QtTest>

#include <fstream>
#include <regex>
#include <set>
#include <stop_token>

#include "accum/engine_messages.h"
#include "accum/metrics_io.h"
#include "accum/planned_run.h"
#include "accum/session.h"

#include "capture.h"

using namespace accum;

namespace {

using testing::Capture;

SummaryRecord run(const RunConfig& config, std::stop_token stop = {}) { return testing::run(config, stop).summary; }

RunConfig tiny() {
    RunConfig c;
    c.dataset = DatasetKind::SyntheticPairs;
    c.model = ModelKind::Mlp;
    c.batch_size = 16;
    c.accumulation_steps = 2;
    c.epochs = 0;
    c.max_steps = 4;
    c.learning_rate = 0.05;
    c.eval_strategy = Strategy::No;
    c.threads = 1;
    return c;
}

// The CNN on Fashion-MNIST under a tensor-memory budget (the lesson's step 1 at 256 × 1, 40 MiB).
RunConfig cnn_under_budget(std::int64_t batch, const std::string& budget) {
    RunConfig c = tiny();
    c.dataset = DatasetKind::FashionMnist;
    c.model = ModelKind::Cnn;
    c.max_steps = 2;
    c.batch_size = batch;
    c.accumulation_steps = 1;
    c.memory_budget = budget;
    return c;
}

using testing::have_fashion_mnist;

std::string arg(const SummaryRecord& s, const std::string& name) {
    const auto it = s.detail.args.find(name);
    return it == s.detail.args.end() ? std::string() : it->second;
}

// The out-of-memory summary as session.cpp wrote it before the codes: the same
// words, concatenated from the same facts (here read back from the arguments).
std::string before_codes_out_of_memory(const SummaryRecord& s) {
    const std::string code = arg(s, "suggestion");
    std::string suggestion;
    const bool exact = !arg(s, "exact").empty();
    if (code == message_code::suggest_batch_one)
        suggestion = "The micro-batch is already 1: raise --memory-budget or use a smaller model.";
    else if (code == message_code::suggest_halved)
        suggestion = "Try micro-batch " + arg(s, "suggested_batch_size") + " × " + arg(s, "suggested_accumulation_steps") +
                     " accumulation steps: effective batch " + arg(s, "effective_batch") +
                     (exact ? " (the same)" : " (the nearest above)") + " with about half the activation memory.";
    else if (code == message_code::suggest_measured) {
        // With gradient checkpointing when the plan picked it, and why that lever.
        std::string why;
        const std::string pick = arg(s, "faster_batch") + " × " + arg(s, "faster_steps");
        const std::string other = arg(s, "slower_batch") + " × " + arg(s, "slower_steps");
        // The ratio with its spread, "1.07 × (1.04–1.10) faster".
        const std::string times_faster =
            arg(s, "ratio") + " ×" + (arg(s, "spread").empty() ? "" : " (" + arg(s, "spread") + ")") + " faster than ";
        if (arg(s, "why") == message_code::plan_faster && !arg(s, "same").empty())
            why = "; " + pick +
                  (arg(s, "checkpointing").empty() ? " without checkpointing against " + other + " with it"
                                                   : " with gradient checkpointing against " + other + " without it") +
                  ": no measurable difference in speed (" + arg(s, "spread") + " ×, measured)";
        else if (arg(s, "why") == message_code::plan_faster)
            why = "; " + pick +
                  (arg(s, "checkpointing").empty()
                       ? " fits without checkpointing and runs " + times_faster + other + " with it"
                       : " with gradient checkpointing runs " + times_faster + other + " without it") +
                  " (measured)";
        else if (arg(s, "why") == message_code::plan_checkpointing_no_larger)
            why = "; " + pick + " fits without checkpointing, and checkpointing lets no larger micro-batch fit "
                                "(it would only add a second forward)";
        else if (arg(s, "why") == message_code::plan_only_checkpointing)
            why = "; only with gradient checkpointing does a micro-batch this large fit";
        suggestion = "Try micro-batch " + arg(s, "suggested_batch_size") + " × " + arg(s, "suggested_accumulation_steps") +
                     " accumulation steps" + (arg(s, "checkpointing").empty() ? "" : " with gradient checkpointing") +
                     ": effective batch " + arg(s, "effective_batch") +
                     (exact ? " (the same)" : " (the nearest above)") + ", measured to fit: it peaked at " +
                     arg(s, "measured_peak") + " of the budget" + why + ".";
    }
    else if (code == message_code::suggest_nothing_fits)
        suggestion = "Measured: " +
                     (arg(s, "plan") == message_code::plan_predicted_too_big
                          ? "even micro-batch 1 is predicted to need " + arg(s, "need") + ", more than " +
                                arg(s, "usable") +
                                " (the budget less the safety margin); raise the budget or use a smaller model"
                          : std::string("no micro-batch fits the budget; raise the budget or use a smaller model")) +
                     ".";
    return "out of memory at micro-batch " + arg(s, "batch_size") + " × " + arg(s, "accumulation_steps") +
           " accumulation steps (budget " + (arg(s, "budget").empty() ? "none" : arg(s, "budget")) + ", peak reached " +
           arg(s, "peak") + "). " + suggestion + " [" + arg(s, "error") + "]";
}

// The names a template uses: {name}, {name?…}, {@name}.
std::set<std::string> names_used(const std::string& text) {
    std::set<std::string> names;
    static const std::regex placeholder(R"(\{@?([a-z0-9_]+)[?}])");
    for (std::sregex_iterator it(text.begin(), text.end(), placeholder), end; it != end; ++it) names.insert((*it)[1]);
    return names;
}

std::set<std::string> names_declared(const std::string& arguments) {
    std::set<std::string> names;
    static const std::regex name(R"([a-z0-9_]+)");
    for (std::sregex_iterator it(arguments.begin(), arguments.end(), name), end; it != end; ++it) names.insert(it->str());
    return names;
}

// The summary survives its JSON line (summary.json, metrics.jsonl) with its code.
void check_json_round_trip(const SummaryRecord& s) {
    std::string error;
    const auto back = parse_json_line(to_json_line(s), error);
    QVERIFY2(back, error.c_str());
    const auto& r = std::get<SummaryRecord>(*back);
    QCOMPARE(r.detail.code, s.detail.code);
    QVERIFY(r.detail.args == s.detail.args);
    QCOMPARE(english_text(r.detail), r.message);
}

// The check every run below makes: a code from the table whose English is the message.
void check_coded(const SummaryRecord& s, const char* code) {
    QCOMPARE(s.detail.code, std::string(code));
    QVERIFY2(find_message_template(s.detail.code), s.detail.code.c_str());
    QCOMPARE(english_text(s.detail), s.message);
    check_json_round_trip(s);
}

} // namespace

class TestMessages : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // Every code once; every name a template uses is among its declared arguments
    // (a `{@name}`'s inner template's are checked on its own row). An interface may
    // get more than the English shows (out_of_memory's requested and in_use, which
    // the English says inside LibTorch's line).
    void tableIsConsistent() {
        std::set<std::string> codes;
        for (const auto& row : message_templates) {
            QVERIFY2(codes.insert(row.code).second, row.code);
            const auto used = names_used(row.english), declared = names_declared(row.arguments);
            for (const auto& n : used) QVERIFY2(declared.count(n), (std::string(row.code) + ": " + n).c_str());
            // With every argument present, nothing of the template's syntax is left.
            std::map<std::string, std::string> args;
            for (const auto& n : declared) args[n] = "x";
            const auto text = render_template(row.english, args);
            QVERIFY2(text.find('{') == std::string::npos && text.find('}') == std::string::npos, text.c_str());
        }
    }

    void templateSyntax() {
        const std::map<std::string, std::string> args{{"a", "1"}, {"b", "two"}, {"empty", ""}, {"inner", "plan_nothing_fits"}};
        QCOMPARE(render_template("x {a} y {b}", args), std::string("x 1 y two"));
        QCOMPARE(render_template("{missing}|{empty}", args), std::string("|"));
        QCOMPARE(render_template("{a?yes|no} {empty?yes|no} {missing?yes}", args), std::string("yes no "));
        QCOMPARE(render_template("{a?[{b?{b}|none}]}", args), std::string("[two]"));
        QCOMPARE(render_template("{@inner}.", args),
                 std::string("no micro-batch fits the budget; raise the budget or use a smaller model."));
        QCOMPARE(render_template("{@missing}!", args), std::string("!"));
        QCOMPARE(render_template("*-idx?-ubyte {} {A} {", args), std::string("*-idx?-ubyte {} {A} {"));
        QCOMPARE(english_text(make_message("no_such_code")), std::string());
    }

    // The planner's speed words: a spread that includes 1 measured no difference.
    void planSpeedWords() {
        std::map<std::string, std::string> args{{"faster_batch", "64"}, {"faster_steps", "4"},
                                                {"slower_batch", "128"}, {"slower_steps", "2"},
                                                {"ratio", "1.07"}, {"spread", "1.03–1.12"}};
        QCOMPARE(english_text(make_message(message_code::plan_faster, args)),
                 std::string("64 × 4 fits without checkpointing and runs 1.07 × (1.03–1.12) faster than 128 × 2 "
                             "with it (measured)"));
        args["ratio"] = "1.0";
        args["spread"] = "0.97–1.04";
        args["same"] = "yes";
        QCOMPARE(english_text(make_message(message_code::plan_faster, args)),
                 std::string("64 × 4 without checkpointing against 128 × 2 with it: no measurable difference in speed "
                             "(0.97–1.04 ×, measured)"));
        args["checkpointing"] = "yes";
        QCOMPARE(english_text(make_message(message_code::plan_faster, args)),
                 std::string("64 × 4 with gradient checkpointing against 128 × 2 without it: no measurable "
                             "difference in speed (0.97–1.04 ×, measured)"));
    }

    // The lesson's step 1: 256 × 1 under 40 MiB runs out; the suggestion is measured.
    void outOfMemoryMeasured() {
        if (!have_fashion_mnist()) QSKIP("no Fashion-MNIST");
        const auto s = run(cnn_under_budget(256, "40MiB"));
        QCOMPARE(s.status, RunStatus::OutOfMemory);
        check_coded(s, message_code::out_of_memory);
        QCOMPARE(arg(s, "suggestion"), std::string(message_code::suggest_measured));
        QCOMPARE(arg(s, "batch_size"), std::string("256"));
        QCOMPARE(arg(s, "accumulation_steps"), std::string("1"));
        QCOMPARE(arg(s, "budget"), std::string("40.0 MiB"));
        QCOMPARE(arg(s, "suggested_batch_size"), std::to_string(s.suggested_batch_size));
        QCOMPARE(arg(s, "suggested_accumulation_steps"), std::to_string(s.suggested_accumulation_steps));
        QCOMPARE(arg(s, "effective_batch"), std::string("256"));
        QCOMPARE(arg(s, "exact"), std::string("yes"));
        // The counting allocator's refusal, as its own line says it.
        QVERIFY(!arg(s, "requested").empty() && !arg(s, "in_use").empty());
        QVERIFY2(arg(s, "error").find("Tried to allocate " + arg(s, "requested") + "; " + arg(s, "in_use") +
                                      " of the 40.0 MiB budget already in use.") != std::string::npos,
                 arg(s, "error").c_str());
        QCOMPARE(s.message, before_codes_out_of_memory(s));
    }

    // A stop while the suggestion is measured leaves the halving guess (128 × 2).
    void outOfMemoryHalved() {
        if (!have_fashion_mnist()) QSKIP("no Fashion-MNIST");
        struct StopOnMeasuring : Capture {
            std::stop_source stop;
            void on_log(const std::string& l) override {
                if (l.rfind("out of memory: measuring", 0) == 0) stop.request_stop();
            }
        } sink;
        Session session;
        const auto s = run_planned(session, cnn_under_budget(256, "40MiB"), sink, sink.stop.get_token());
        QCOMPARE(s.status, RunStatus::OutOfMemory);
        check_coded(s, message_code::out_of_memory);
        QCOMPARE(arg(s, "suggestion"), std::string(message_code::suggest_halved));
        QCOMPARE(arg(s, "suggested_batch_size"), std::string("128"));
        QCOMPARE(arg(s, "suggested_accumulation_steps"), std::string("2"));
        QCOMPARE(s.message, before_codes_out_of_memory(s));
    }

    // Micro-batch 1 already: no suggestion but a bigger budget or a smaller model;
    // at 64 under 5 MiB the plan predicts that nothing fits.
    void outOfMemoryNothingToSuggest() {
        if (!have_fashion_mnist()) QSKIP("no Fashion-MNIST");
        const auto one = run(cnn_under_budget(1, "5MiB"));
        QCOMPARE(one.status, RunStatus::OutOfMemory);
        check_coded(one, message_code::out_of_memory);
        QCOMPARE(arg(one, "suggestion"), std::string(message_code::suggest_batch_one));
        QCOMPARE(one.message, before_codes_out_of_memory(one));

        const auto none = run(cnn_under_budget(64, "5MiB"));
        QCOMPARE(none.status, RunStatus::OutOfMemory);
        check_coded(none, message_code::out_of_memory);
        QCOMPARE(arg(none, "suggestion"), std::string(message_code::suggest_nothing_fits));
        QCOMPARE(arg(none, "plan"), std::string(message_code::plan_predicted_too_big));
        QCOMPARE(none.message, before_codes_out_of_memory(none));
    }

    // A learning rate of 100 with momentum: the loss goes non-finite within a few
    // steps; the message names the step and the checkpoint the weights were left at.
    void diverged() {
        QTemporaryDir dir;
        RunConfig c = tiny();
        c.learning_rate = 100;
        c.momentum = 0.9;
        c.max_steps = 50;
        c.output_dir = dir.path().toStdString();
        const auto s = run(c);
        QCOMPARE(s.status, RunStatus::Diverged);
        QCOMPARE(s.exit_code, exit_code::diverged);
        check_coded(s, message_code::diverged);
        const int step = std::stoi(arg(s, "step"));
        QCOMPARE(arg(s, "good_step"), std::to_string(step - 1));
        QCOMPARE(s.optimizer_steps, std::int64_t(step - 1));
        const std::string checkpoint = arg(s, "checkpoint");
        QVERIFY2(checkpoint.find("checkpoint-" + std::to_string(step - 1)) != std::string::npos, s.message.c_str());
        const std::string before_codes =
            "diverged: the loss became " + std::string(arg(s, "gradient_only").empty() ? "" : "finite but the gradient norm ") +
            "non-finite at optimizer step " + arg(s, "step") + " (loss " + arg(s, "loss") + ", gradient norm " +
            arg(s, "grad_norm") + "); the weights were left at step " + arg(s, "good_step") +
            ". Lower --lr or set --max-grad-norm; last good checkpoint " + checkpoint;
        QCOMPARE(s.message, before_codes);
    }

    // Data missing: the directory, then a file in it; a CSV that is not there, one
    // whose line holds a word for a number, one with a line short of fields.
    void dataMissingOrCorrupt() {
        QTemporaryDir dir;
        const std::string hint = "Fashion-MNIST comes with Debian's package dataset-fashion-mnist (apt-get install "
                                 "dataset-fashion-mnist), or pass --data DIR with the four *-idx?-ubyte.gz files";
        RunConfig c = tiny();
        c.dataset = DatasetKind::FashionMnist;
        c.data_path = dir.filePath("nothing").toStdString();
        auto s = run(c);
        QCOMPARE(s.exit_code, exit_code::data_error);
        check_coded(s, message_code::data_directory_missing);
        QCOMPARE(arg(s, "path"), c.data_path);
        QCOMPARE(s.message, "Fashion-MNIST directory " + c.data_path + " does not exist. " + hint);

        c.data_path = dir.path().toStdString();
        s = run(c);
        check_coded(s, message_code::data_file_missing);
        const std::string file = c.data_path + "/train-images-idx3-ubyte.gz";
        QCOMPARE(arg(s, "path"), file);
        QCOMPARE(s.message, "Fashion-MNIST file " + file + " is missing. " + hint);

        c = tiny();
        c.dataset = DatasetKind::Csv;
        c.data_path = dir.filePath("absent.csv").toStdString();
        s = run(c);
        check_coded(s, message_code::data_cannot_open);
        QCOMPARE(s.message, c.data_path + ": cannot open (No such file or directory)");

        c.data_path = dir.filePath("words.csv").toStdString();
        std::ofstream(c.data_path) << "a,b,label\n1,2,0\n3,four,1\n";
        s = run(c);
        check_coded(s, message_code::csv_not_a_number);
        QCOMPARE(arg(s, "line"), std::string("3"));
        QCOMPARE(s.message, c.data_path + ":3: column 'b' value 'four' is not a number");

        c.data_path = dir.filePath("short.csv").toStdString();
        std::ofstream(c.data_path) << "a,b,label\n1,2,0\n3,1\n";
        s = run(c);
        check_coded(s, message_code::csv_field_count);
        QCOMPARE(s.message, c.data_path + ":3: expected 3 fields, found 2");

        c.dataset = DatasetKind::FashionMnist;
        const auto fm = dir.filePath("fm");
        QDir().mkpath(fm);
        for (const char* name : {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
                                 "t10k-labels-idx1-ubyte.gz"})
            std::ofstream((fm + "/" + name).toStdString()) << "not gzip";
        c.data_path = fm.toStdString();
        s = run(c);
        check_coded(s, message_code::data_not_gzip);
        QCOMPARE(s.message, c.data_path + "/train-images-idx3-ubyte.gz: not a gzip file (bad magic bytes)");
    }

    // Invalid options: the first problem's option and text, the others after it, in
    // option order as validate() gives them; a micro-batch larger than the data.
    void invalidOption() {
        RunConfig c = tiny();
        c.dropout = 2.0;
        c.learning_rate = -1;
        auto s = run(c);
        QCOMPARE(s.exit_code, exit_code::invalid_arguments);
        check_coded(s, message_code::invalid_configuration);
        QCOMPARE(arg(s, "option"), std::string("dropout"));
        const auto problems = validate(c);
        QCOMPARE(problems.size(), std::size_t(2));
        QCOMPARE(s.message, problems[0].to_string() + "; " + problems[1].to_string());
        QCOMPARE(arg(s, "more"), problems[1].to_string());

        QTemporaryDir dir;
        c = tiny();
        c.dataset = DatasetKind::Csv;
        c.data_path = dir.filePath("few.csv").toStdString();
        std::ofstream(c.data_path) << "a,label\n1,0\n2,1\n3,0\n4,1\n5,0\n";
        c.batch_size = 100;
        s = run(c);
        QCOMPARE(s.exit_code, exit_code::invalid_arguments);
        check_coded(s, message_code::batch_larger_than_data);
        QCOMPARE(s.message, std::string("--batch-size: 100 is larger than the 4 training samples of csv; use at most 4"));
    }

    // Completed (with the updates --skip-nonfinite skipped), stopped before it began.
    void completedAndStopped() {
        auto s = run(tiny());
        QCOMPARE(s.status, RunStatus::Completed);
        check_coded(s, message_code::completed);
        QCOMPARE(s.message, std::string("completed 4 optimizer steps"));

        RunConfig c = tiny();
        c.learning_rate = 100;
        c.momentum = 0.9;
        c.max_steps = 30;
        c.skip_nonfinite = true;
        s = run(c);
        QCOMPARE(s.status, RunStatus::Completed);
        check_coded(s, message_code::completed);
        QVERIFY(!arg(s, "skipped").empty());
        QCOMPARE(s.message, "completed 30 optimizer steps (" + arg(s, "skipped") + " skipped as non-finite by --skip-nonfinite)");

        std::stop_source stop;
        stop.request_stop();
        s = run(tiny(), stop.get_token());
        QCOMPARE(s.status, RunStatus::Stopped);
        check_coded(s, message_code::stopped_before_start);
        QCOMPARE(s.message, std::string("stopped before the run started"));
    }
};

QTEST_GUILESS_MAIN(TestMessages)
#include "test_messages.moc"
// SPDX-License-Identifier: GPL-3.0-or-later

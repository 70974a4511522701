// RunConfig validation, sizes and JSON; the CLI's option parsing.
#include <QtTest/QtTest>

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "accum/option_table.h"
#include "accum/run_config.h"
#include "accum/run_directory.h"
#include "runner/cli_options.h"

using namespace accum;

namespace {
bool mentions(const std::vector<ConfigProblem>& problems, const std::string& option) {
    for (const auto& p : problems)
        if (p.option == option) return true;
    return false;
}
std::string all_text(const std::vector<ConfigProblem>& problems) {
    std::string s;
    for (const auto& p : problems) s += p.to_string() + "\n";
    return s;
}
} // namespace

class TestConfig : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // The std::filesystem this program calls is the system libstdc++'s, not
    // the copy PyPI's LibTorch 2.x exports, whose remove_all jumps to address 0
    // (CMakeLists.txt names libstdc++ first on every link line); clearing a
    // run, which removes its checkpoint folders with remove_all, then works.
    void filesystemIsTheSystemLibstdcxxs() {
        void* remove_all = dlsym(RTLD_DEFAULT, "_ZNSt10filesystem10remove_allERKNS_7__cxx114pathERSt10error_code");
        QVERIFY(remove_all);
        Dl_info info{};
        QVERIFY(dladdr(remove_all, &info) != 0 && info.dli_fname);
        QVERIFY2(QByteArray(info.dli_fname).contains("libstdc++"), info.dli_fname);

        QTemporaryDir dir;
        const std::filesystem::path run(dir.path().toStdString());
        std::filesystem::create_directories(run / "checkpoint-4");
        std::ofstream(run / "checkpoint-4" / "model.pt") << "x";
        std::ofstream(run / "metrics.jsonl") << "{}\n";
        std::string error;
        QVERIFY2(clear_run(run.string(), error), error.c_str());
        QVERIFY(!std::filesystem::exists(run / "checkpoint-4"));
        QVERIFY(!std::filesystem::exists(run / "metrics.jsonl"));
    }

    void defaultsAreValid() { QVERIFY2(validate(RunConfig{}).empty(), all_text(validate(RunConfig{})).c_str()); }

    void invalidValuesNameTheOption_data() {
        QTest::addColumn<QString>("option");
        QTest::addColumn<int>("which");
        QTest::newRow("batch 0") << "batch-size" << 0;
        QTest::newRow("batch negative") << "batch-size" << 1;
        QTest::newRow("K 0") << "accumulation-steps" << 2;
        QTest::newRow("lr zero") << "lr" << 6;
        QTest::newRow("lr nan") << "lr" << 7;
        QTest::newRow("no length") << "epochs" << 8;
        QTest::newRow("budget") << "memory-budget" << 9;
        QTest::newRow("device") << "device" << 10;
        QTest::newRow("cnn on tokens") << "model" << 11;
        QTest::newRow("eval steps") << "eval-steps" << 12;
        QTest::newRow("scheduler pitfall outside the plain loop") << "scheduler-per-micro-batch" << 13;
        QTest::newRow("scaler pitfall without a scaler") << "scaler-per-micro-batch" << 14;
        QTest::newRow("scaler pitfall outside the plain loop") << "scaler-per-micro-batch" << 15;
        QTest::newRow("loss scale beyond float32") << "loss-scale-init" << 16;
        QTest::newRow("fp16 on the cpu") << "mixed-precision" << 17;
    }
    void invalidValuesNameTheOption() {
        QFETCH(QString, option);
        QFETCH(int, which);
        RunConfig c;
        switch (which) {
        case 0: c.batch_size = 0; break;
        case 1: c.batch_size = -3; break;
        case 2: c.accumulation_steps = 0; break;
        case 6: c.learning_rate = 0; break;
        case 7: c.learning_rate = std::nan(""); break;
        case 8: c.epochs = 0; c.max_steps = 0; break;
        case 9: c.memory_budget = "lots"; break;
        case 10: c.device = "tpu"; break;
        case 11: c.model = ModelKind::Cnn; c.dataset = DatasetKind::SyntheticPairs; break;
        case 12: c.eval_strategy = Strategy::Steps; c.eval_steps = 0; break;
        case 13: c.mode = Mode::Trainer; c.scheduler_per_micro_batch = true; break;
        case 14: c.scaler_per_micro_batch = true; break;
        case 15: c.mode = Mode::Accelerator; c.loss_scaling = LossScaling::Dynamic; c.scaler_per_micro_batch = true; break;
        case 16: c.loss_scaling = LossScaling::Dynamic; c.loss_scale_init = 1e39; break;
        case 17: c.mixed_precision = MixedPrecision::Fp16; c.device = "cpu"; break;
        }
        const auto problems = validate(c);
        QVERIFY2(mentions(problems, option.toStdString()), all_text(problems).c_str());
        QCOMPARE(problems.size(), std::size_t(1)); // only the broken option is reported
    }

    // The enumerated options are parsed once, from their names, in the option
    // table: an unknown name is an error that names the option, the value and the
    // choices, on the command line and in a config file alike.
    void unknownChoicesAreRejected_data() {
        QTest::addColumn<QString>("option");
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("choices");
        QTest::newRow("mode") << "mode" << "keras" << "pytorch, accelerator, trainer";
        QTest::newRow("dataset") << "dataset" << "imagenet" << "fashion-mnist, synthetic-pairs, synthetic-lm, csv, tensors";
        QTest::newRow("model") << "model" << "resnet" << "mlp, cnn, transformer";
        QTest::newRow("optimizer") << "optimizer" << "lion" << "sgd, adamw";
        QTest::newRow("scheduler") << "scheduler" << "step" << "constant, linear, cosine";
        QTest::newRow("eval-strategy") << "eval-strategy" << "always" << "epoch, steps, no";
        QTest::newRow("save-strategy") << "save-strategy" << "best" << "epoch, steps, no";
        QTest::newRow("loss-normalization") << "loss-normalization" << "median" << "mean, tokens";
        QTest::newRow("cpu-kernels") << "cpu-kernels" << "mkl" << "fused, aten";
    }
    void unknownChoicesAreRejected() {
        QFETCH(QString, option);
        QFETCH(QString, value);
        QFETCH(QString, choices);
        RunConfig c;
        std::string error;
        QVERIFY(!set_option(c, option.toStdString(), value.toStdString(), error));
        QVERIFY2(error.find("'" + value.toStdString() + "'") != std::string::npos, error.c_str());
        QVERIFY2(error.find("(choose " + choices.toStdString() + ")") != std::string::npos, error.c_str());
        QCOMPARE(to_json_text(c), to_json_text(RunConfig{})); // nothing changed
        const auto p = cli::parse_arguments({"--" + option.toStdString(), value.toStdString()});
        QVERIFY(mentions(p.problems, option.toStdString()));
        std::vector<ConfigProblem> problems;
        from_json_text("{\"" + option.toStdString() + "\": \"" + value.toStdString() + "\"}", RunConfig{}, problems);
        QVERIFY(mentions(problems, option.toStdString()));
        // Every name of the option reads back as itself.
        for (const auto& name : QString(choices).split(", ")) {
            QVERIFY2(set_option(c, option.toStdString(), name.toStdString(), error), error.c_str());
            QVERIFY(to_json_text(c).find("\"" + option.toStdString() + "\": \"" + name.toStdString() + "\"") !=
                    std::string::npos);
        }
    }

    // Run directories made in the same second get different names; creating one
    // is its claim, so none is ever reused.
    void runDirectoriesAreUnique() {
        QTemporaryDir parent;
        std::string error;
        std::set<std::string> made;
        for (int i = 0; i < 4; ++i) {
            const auto dir = create_run_directory(parent.filePath("runs").toStdString(), error);
            QVERIFY2(!dir.empty(), error.c_str());
            QVERIFY(QDir(QString::fromStdString(dir)).exists());
            made.insert(dir);
        }
        QCOMPARE(made.size(), std::size_t(4));
        QFile blocker(parent.filePath("file"));
        QVERIFY(blocker.open(QIODevice::WriteOnly));
        blocker.close();
        QVERIFY(create_run_directory(parent.filePath("file").toStdString(), error).empty());
        QVERIFY2(error.find("cannot create") != std::string::npos, error.c_str());
    }

    // A directory that holds a run is kept unless the run resumes there or
    // --overwrite-output-dir is given.
    void outputDirectoryProblems() {
        QTemporaryDir dir;
        RunConfig c;
        c.output_dir = dir.path().toStdString();
        QVERIFY(output_dir_problem(c).empty()); // empty
        QFile f(dir.filePath("metrics.jsonl"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{}\n");
        f.close();
        const auto problem = output_dir_problem(c);
        QVERIFY2(problem.find(c.output_dir + " already holds a run") != std::string::npos, problem.c_str());
        c.resume_from = c.output_dir + "/checkpoint-5";
        QVERIFY(output_dir_problem(c).empty());
        c.resume_from.clear();
        c.overwrite_output_dir = true;
        QVERIFY(output_dir_problem(c).empty());
    }

    void everyProblemIsReported() {
        RunConfig c;
        c.batch_size = 0;
        c.accumulation_steps = 0;
        c.learning_rate = -1;
        const auto problems = validate(c);
        QCOMPARE(problems.size(), std::size_t(3));
        QVERIFY(problems[0].to_string().find("--batch-size") == 0);
    }

    void byteSizes_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<qint64>("bytes");
        QTest::newRow("MiB") << "512MiB" << qint64(512) * 1024 * 1024;
        QTest::newRow("GiB") << "2GiB" << qint64(2) * 1024 * 1024 * 1024;
        QTest::newRow("GB") << "1.5GB" << qint64(1500000000);
        QTest::newRow("plain") << "100000" << qint64(100000);
        QTest::newRow("zero") << "0" << qint64(0);
        QTest::newRow("lower") << "64mib" << qint64(64) * 1024 * 1024;
        QTest::newRow("spaces") << " 3 KiB " << qint64(3072);
    }
    void byteSizes() {
        QFETCH(QString, text);
        QFETCH(qint64, bytes);
        const auto parsed = parse_byte_size(text.toStdString());
        QVERIFY(parsed.has_value());
        QCOMPARE(qint64(*parsed), bytes);
    }
    void badByteSizes() {
        for (const char* s : {"", "MiB", "12 parsecs", "-5MiB", "1.2.3GiB", "1e999GiB"})
            QVERIFY2(!parse_byte_size(s).has_value(), s);
    }

    void jsonRoundTrip() {
        RunConfig c;
        c.mode = Mode::Trainer;
        c.batch_size = 17;
        c.accumulation_steps = 5;
        c.learning_rate = 0.003;
        c.memory_budget = "96MiB";
        c.shuffle = false;
        c.seed = 1234567890123ULL;
        std::vector<ConfigProblem> problems;
        const RunConfig back = from_json_text(to_json_text(c), RunConfig{}, problems);
        QVERIFY(problems.empty());
        QCOMPARE(to_json_text(back), to_json_text(c));
    }
    // --model FILE.pt: a TorchScript module (ModelKind::File), written back as its
    // path; what the engine builds into its own models is refused with it.
    void modelFromFile() {
        RunConfig c;
        std::string error;
        QVERIFY2(set_option(c, "model", "models/bert.pt", error), error.c_str());
        QCOMPARE(c.model, ModelKind::File);
        QCOMPARE(c.model_file, std::string("models/bert.pt"));
        QVERIFY(to_json_text(c).find("\"model\": \"models/bert.pt\"") != std::string::npos);
        std::vector<ConfigProblem> problems;
        const RunConfig back = from_json_text(to_json_text(c), RunConfig{}, problems);
        QVERIFY(problems.empty());
        QCOMPARE(back.model, ModelKind::File);
        QCOMPARE(back.model_file, c.model_file);
        QVERIFY2(validate(c).empty(), all_text(validate(c)).c_str());
        // A built-in name again forgets the file.
        QVERIFY(set_option(c, "model", "cnn", error));
        QCOMPARE(c.model, ModelKind::Cnn);
        QVERIFY(c.model_file.empty());
        // "file" alone names no file.
        QVERIFY(!set_option(c, "model", "file", error));
        QVERIFY2(error.find("no TorchScript file") != std::string::npos, error.c_str());
        RunConfig f;
        QVERIFY(set_option(f, "model", "lm.pth", error));
        f.gradient_checkpointing = true;
        f.dropout = 0.1;
        f.batch_norm = true;
        const auto refused = validate(f);
        for (const char* option : {"gradient-checkpointing", "dropout", "batch-norm"})
            QVERIFY2(mentions(refused, option), (std::string(option) + ": " + all_text(refused)).c_str());
        RunConfig t;
        t.dataset = DatasetKind::Tensors;
        QVERIFY(mentions(validate(t), "data"));
        t.data_path = "data.pt";
        QVERIFY(validate(t).empty());
    }
    void jsonErrorsNameTheKey() {
        std::vector<ConfigProblem> problems;
        from_json_text(R"({"batch-size": "big", "colour": 3, "lr": 0.1})", RunConfig{}, problems);
        QCOMPARE(problems.size(), std::size_t(2));
        QVERIFY(mentions(problems, "batch-size"));
        QVERIFY(mentions(problems, "colour"));
        problems.clear();
        from_json_text("{not json", RunConfig{}, problems);
        QVERIFY(mentions(problems, "config"));
        problems.clear();
        from_json_text("{\"lr\": 111111111111e1111111}", RunConfig{}, problems); // found by fuzz_config
        QVERIFY(mentions(problems, "config"));
        problems.clear();
        // Underscore spellings (as Python's TrainingArguments) are accepted.
        const auto c = from_json_text(R"({"gradient_accumulation_steps": 8, "learning_rate": 0.5})", RunConfig{}, problems);
        QVERIFY(problems.empty());
        QCOMPARE(c.accumulation_steps, std::int64_t(8));
        QCOMPARE(c.learning_rate, 0.5);
    }

    void cliParsesOptions() {
        const auto p = cli::parse_arguments({"--mode", "accelerator", "--batch-size=32", "--accumulation-steps", "8",
                                             "--no-shuffle", "--lr", "1e-3", "--max-steps", "7"});
        QVERIFY(p.problems.empty());
        QCOMPARE(p.config.mode, Mode::Accelerator);
        QCOMPARE(p.config.batch_size, std::int64_t(32));
        QCOMPARE(p.config.accumulation_steps, std::int64_t(8));
        QVERIFY(!p.config.shuffle);
        QCOMPARE(p.config.learning_rate, 1e-3);
        QCOMPARE(p.config.max_steps, std::int64_t(7));
    }
    void cliReportsBadOptions() {
        auto p = cli::parse_arguments({"--batch-size", "abc"});
        QVERIFY(mentions(p.problems, "batch-size"));
        p = cli::parse_arguments({"--frobnicate"});
        QVERIFY(mentions(p.problems, "frobnicate"));
        p = cli::parse_arguments({"--lr"});
        QVERIFY(mentions(p.problems, "lr"));
        p = cli::parse_arguments({"--quiet=yes"});
        QVERIFY(mentions(p.problems, "quiet"));
        p = cli::parse_arguments({"--epochs", "0"});
        QVERIFY(mentions(p.problems, "epochs"));
        // An alias's problem names the alias as typed, and the option beside it.
        p = cli::parse_arguments({"--learning-rate", "abc"});
        QVERIFY2(mentions(p.problems, "learning-rate (--lr)"), all_text(p.problems).c_str());
        p = cli::parse_arguments({"--learning-rate", "0.1", "--lr", "abc"}); // the last spelling typed
        QVERIFY2(mentions(p.problems, "lr"), all_text(p.problems).c_str());
        p = cli::parse_arguments({"train", "--gradient-accumulation-steps", "0"});
        QVERIFY2(mentions(p.problems, "gradient-accumulation-steps (--accumulation-steps)"), all_text(p.problems).c_str());
        p = cli::parse_arguments({"--config=", "--max-steps", "3"}); // an empty file name is no file
        QVERIFY(mentions(p.problems, "config"));
        // --resume of a directory without a run record, with only options of where
        // the run writes and how it shows (the table's rows not shaping training),
        // would train the defaults: refused. One option of what it trains is a run.
        {
            QTemporaryDir none;
            const std::string dir = none.path().toStdString();
            p = cli::parse_arguments({"--resume", dir, "--quiet", "--threads", "1", "--output-dir", dir});
            QVERIFY2(mentions(p.problems, "resume"), all_text(p.problems).c_str());
            p = cli::parse_arguments({"--resume", dir, "--quiet", "--lr", "0.1"});
            QVERIFY2(!mentions(p.problems, "resume"), all_text(p.problems).c_str());
        }
        // A runner's option without its value does not take the next option as one.
        for (const std::string runner : {"config", "target-batch", "noise-scale-from"}) {
            p = cli::parse_arguments({"--" + runner, "--max-steps", "3"});
            QVERIFY2(mentions(p.problems, runner), runner.c_str());
            QCOMPARE(p.config.max_steps, std::int64_t(3));
        }
    }
    // The one option table (accum/option_table.h) against what is made from it,
    // both ways and with no exception: --help, the manual page and the completion
    // list exactly its rows; the JSON form's keys are exactly its config keys; the
    // runner's rows are refused in JSON and read by the parser.
    void optionTableIsHelpManCompletionAndJson() {
        std::set<std::string> rows, config_keys;
        for (const auto& row : option_table()) {
            QVERIFY2(rows.insert(row.name).second, row.name.c_str()); // each name once
            if (row.role == OptionRow::Role::ConfigKey) config_keys.insert(row.name);
        }
        QVERIFY(rows.size() > 50);

        std::set<std::string> help;
        for (const QString& line : QString::fromStdString(cli::usage()).split('\n'))
            if (line.startsWith("  --")) help.insert(line.mid(4).section(' ', 0, 0).toStdString());
        QCOMPARE(help, rows);
        std::set<std::string> man;
        const QString page = QString::fromStdString(cli::manual_page(cli::program_doc(), "2026-01-01", "test", ""));
        for (const auto& m : QRegularExpression(R"(\\fB\\-\\-((?:[a-z0-9]|\\-)+)\\fR)").globalMatch(page))
            man.insert(m.captured(1).replace("\\-", "-").toStdString());
        QCOMPARE(man, rows);
        std::set<std::string> completed;
        const QString completion = QString::fromStdString(cli::bash_completion(cli::program_doc()));
        for (const auto& m : QRegularExpression(R"((?<![\w-])--([a-z][a-z0-9-]*))").globalMatch(completion))
            completed.insert(m.captured(1).toStdString());
        QCOMPARE(completed, rows);

        std::set<std::string> json_keys;
        const nlohmann::json defaults = nlohmann::json::parse(to_json_text(RunConfig{}));
        for (const auto& [key, value] : defaults.items()) json_keys.insert(key);
        QCOMPARE(json_keys, config_keys);

        for (const auto& row : option_table()) {
            if (row.role != OptionRow::Role::Runner) continue;
            std::vector<ConfigProblem> problems;
            from_json_text("{\"" + row.name + "\": 1}", RunConfig{}, problems);
            QVERIFY2(problems.size() == 1 && problems[0].option == row.name &&
                         problems[0].message.find("command line, not a config key") != std::string::npos,
                     (row.name + ": " + all_text(problems)).c_str());
            // The parser reads it (a row it has no code for is named as a bug).
            std::vector<std::string> args{row.name == "json" ? "estimate" : "plan", "--" + row.name};
            if (row.takes_value()) args.push_back("8");
            for (const auto& p : cli::parse_arguments(args).problems)
                QVERIFY2(p.message.find("not a known option") == std::string::npos &&
                             p.message.find("does not read") == std::string::npos,
                         (row.name + ": " + p.to_string()).c_str());
        }
    }

    // Each alias sets the same field as its name, on the command line and in JSON
    // (with '_' for '-'); each switch sets the key and value its row names.
    void optionTableAliasesAndSwitches() {
        const auto json_of = [](const RunConfig& c) { return nlohmann::json::parse(to_json_text(c)); };
        const nlohmann::json defaults = json_of(RunConfig{});
        int aliases = 0, switches = 0;
        for (const auto& row : option_table()) {
            for (const auto& alias : row.aliases) {
                QVERIFY2(row.role == OptionRow::Role::ConfigKey && row.takes_value(), alias.c_str());
                // A value other than the default: the next whole number, or another of the values.
                const nlohmann::json& was = defaults.at(row.name);
                std::string value;
                if (was.is_number()) value = std::to_string(was.get<std::int64_t>() + 1);
                for (const auto& v : row.values)
                    if (value.empty() && v != was.get<std::string>()) value = v;
                QVERIFY2(!value.empty(), alias.c_str());
                const auto by_name = cli::parse_arguments({"--" + row.name, value});
                const auto by_alias = cli::parse_arguments({"--" + alias, value});
                QVERIFY2(by_name.problems.empty() && by_alias.problems.empty(), all_text(by_alias.problems).c_str());
                QVERIFY2(json_of(by_name.config).at(row.name) != was, alias.c_str());
                QCOMPARE(json_of(by_alias.config), json_of(by_name.config));
                std::string key = alias;
                std::replace(key.begin(), key.end(), '-', '_');
                std::vector<ConfigProblem> problems;
                const RunConfig from_json =
                    from_json_text("{\"" + key + "\": " + (was.is_number() ? value : "\"" + value + "\"") + "}",
                                   RunConfig{}, problems);
                QVERIFY2(problems.empty(), all_text(problems).c_str());
                QCOMPARE(json_of(from_json), json_of(by_name.config));
                ++aliases;
            }
            if (row.takes_value() || row.role == OptionRow::Role::Runner) continue;
            const auto parsed = cli::parse_arguments({"--" + row.name});
            for (const auto& p : parsed.problems) // (validate() may name the switch: a pitfall demo alone)
                QVERIFY2(p.message.find("not a known option") == std::string::npos &&
                             p.message.find("takes no value") == std::string::npos,
                         (row.name + ": " + p.to_string()).c_str());
            const nlohmann::json set = json_of(parsed.config).at(row.sets_key);
            QCOMPARE(QString::fromStdString(set.is_string() ? set.get<std::string>() : set.dump()),
                     QString::fromStdString(row.sets_value));
            std::vector<ConfigProblem> problems;
            const RunConfig from_json = from_json_text("{\"" + row.name + "\": true}", RunConfig{}, problems);
            QVERIFY2(problems.empty(), all_text(problems).c_str());
            QCOMPARE(json_of(from_json).at(row.sets_key), set);
            // The whole run, not only the key: a switch in a file is no TrainingArguments file.
            QCOMPARE(json_of(from_json), json_of(parsed.config));
            ++switches;
        }
        QCOMPARE(aliases, 2); // learning-rate, gradient-accumulation-steps
        QVERIFY(switches > 10);
        QVERIFY(!cli::parse_arguments({"--no-shuffle"}).config.shuffle); // a row's meaning, not only its form
        QVERIFY(cli::parse_arguments({"--no-shuffle", "--shuffle"}).config.shuffle);
        // In a file the keys have no order: a switch and the key it sets, two
        // switches of one key, or a key beside its alias, are refused, naming both.
        for (const std::string text : {R"({"no-shuffle": true, "shuffle": true})", R"({"bf16": true, "fp16": true})",
                                       R"({"lr": 0.1, "learning_rate": 0.2})",
                                       R"({"accumulation_steps": 2, "accumulation-steps": 8})"}) {
            std::vector<ConfigProblem> problems;
            from_json_text(text, RunConfig{}, problems);
            QVERIFY2(problems.size() == 1 && problems[0].message.find("conflicts with") != std::string::npos,
                     (text + ": " + all_text(problems)).c_str());
        }
        RunConfig c;
        std::string error;
        QVERIFY(!set_option(c, "seed", "-1", error));
        QVERIFY2(error.find("-1") != std::string::npos, error.c_str()); // the message shows the value
    }

    // The Trainer's spelling of mixed precision: bf16/fp16 as flags and as config keys.
    void trainerPrecisionSpellings() {
        QCOMPARE(cli::parse_arguments({"--bf16"}).config.mixed_precision, MixedPrecision::Bf16);
        std::vector<ConfigProblem> problems;
        QCOMPARE(from_json_text(R"({"fp16": true})", RunConfig{}, problems).mixed_precision, MixedPrecision::Fp16);
        QCOMPARE(from_json_text(R"({"bf16": false})", RunConfig{}, problems).mixed_precision, MixedPrecision::No);
        QVERIFY(problems.empty());
        const auto p = cli::parse_arguments({"--mixed-precision", "fp16", "--device", "cpu"});
        QVERIFY(mentions(p.problems, "mixed-precision"));
        QVERIFY(all_text(p.problems).find("fp16 needs CUDA; use bf16 on the CPU") != std::string::npos);
    }

    void cliFlagsOverrideConfigFile() {
        QTemporaryDir dir;
        const QString path = dir.filePath("c.json");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"batch-size": 16, "accumulation-steps": 2, "mode": "trainer"})");
        f.close();
        const auto p = cli::parse_arguments({"--config", path.toStdString(), "--batch-size", "8"});
        QVERIFY(p.problems.empty());
        QCOMPARE(p.config.batch_size, std::int64_t(8));        // flag wins
        QCOMPARE(p.config.accumulation_steps, std::int64_t(2)); // from the file
        QCOMPARE(p.config.mode, Mode::Trainer);
    }
};

QTEST_GUILESS_MAIN(TestConfig)
#include "test_config.moc"
// SPDX-License-Identifier: GPL-3.0-or-later

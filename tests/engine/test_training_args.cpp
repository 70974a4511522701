// SPDX-License-Identifier: GPL-3.0-or-later
// Transformers' TrainingArguments as accum-run's configuration: the fixtures in
// data/training_args are what TrainingArguments(...).to_json_string() of
// Transformers 5.25 wrote (make_fixtures.py there, with the generating
// command). Each must run exactly as the options it stands for, written out
// by hand below; a field the engine does not implement is refused by name.
#include <QtTest/QtTest>

#include <cmath>

#include <nlohmann/json.hpp>

#include "accum/config_text.h"
#include "accum/run_config.h"
#include "metrics_file.h"
#include "processes.h"
#include "runner/cli_options.h"

using namespace accum;

namespace {

using testing::read_steps;
using testing::run_cli;

QString fixture(const QString& name) { return QStringLiteral(ACCUM_TEST_DATA_DIR "/training_args/") + name; }

std::string read_text(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return f.readAll().toStdString();
}

nlohmann::json fixture_json(const QString& name) { return nlohmann::json::parse(read_text(fixture(name))); }

// A fixture with some fields changed, written into `dir`.
QString variant(const QTemporaryDir& dir, const QString& name, const nlohmann::json& changes) {
    auto j = fixture_json(name);
    for (const auto& [key, value] : changes.items()) j[key] = value;
    const QString path = dir.filePath("variant-" + name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) return {};
    f.write(QByteArray::fromStdString(j.dump(2)));
    return path;
}

// accum_config.json (the record) of a run, without its output directory (the one key that differs
// between two runs side by side).
nlohmann::json written_config(const QString& dir) {
    auto j = nlohmann::json::parse(read_text(dir + "/accum_config.json"));
    j.erase("output-dir");
    return j;
}

const QStringList kData{"--dataset", "synthetic-pairs"};

} // namespace

class TestTrainingArgs : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // The studio's "open configuration" (ui/main_window.cpp) reads a file with
    // from_json_text, as --config does: a TrainingArguments file opens there too.
    void studioPathReadsTrainingArguments() {
        std::vector<ConfigProblem> problems;
        const auto c = from_json_text(read_text(fixture("steps_sgd.json")), RunConfig{}, problems);
        QVERIFY2(problems.empty(), problems.empty() ? "" : problems.front().to_string().c_str());
        QCOMPARE(c.mode, Mode::Trainer);
        QCOMPARE(c.batch_size, std::int64_t(32));
        QCOMPARE(c.accumulation_steps, std::int64_t(2));
        QCOMPARE(c.max_steps, std::int64_t(30));
        QCOMPARE(c.optimizer, OptimizerKind::Sgd);
        QCOMPARE(c.momentum, 0.0); // torch.optim.SGD's default, as the Trainer makes it
        QCOMPARE(c.eval_strategy, Strategy::Steps);
        QCOMPARE(c.eval_steps, std::int64_t(10));
        QCOMPARE(c.save_steps, std::int64_t(15));
        QCOMPARE(c.save_total_limit, std::int64_t(1));
        QCOMPARE(c.seed, std::uint64_t(7));
        QCOMPARE(c.output_dir, std::string("runs/ta-steps"));
        QCOMPARE(c.max_grad_norm, 1.0); // TrainingArguments' default
        QVERIFY(validate(c).empty());
    }

    void fieldsMapToOptions() {
        std::vector<ConfigProblem> problems;
        std::vector<std::string> ignored;
        const auto c = read_config_text(read_text(fixture("cosine_bf16.json")), RunConfig{}, problems, ignored);
        QVERIFY(problems.empty());
        QCOMPARE(c.scheduler, SchedulerKind::Cosine);
        QCOMPARE(c.warmup_steps, std::int64_t(0));
        QCOMPARE(c.warmup_ratio, 0.1); // warmup_steps 0.1: below 1, a ratio (get_warmup_steps)
        QCOMPARE(c.weight_decay, 0.01);
        QCOMPARE(c.max_grad_norm, 0.5);
        QCOMPARE(c.mixed_precision, MixedPrecision::Bf16);
        QCOMPARE(c.device, std::string("cpu"));
        QCOMPARE(c.optimizer, OptimizerKind::AdamW);
        QCOMPARE(c.report_to, std::string("none"));
        // use_cpu=True made Transformers turn dataloader_pin_memory off: named as ignored.
        QCOMPARE(ignored, std::vector<std::string>{"dataloader_pin_memory"});

        // A file of a few fields: the others at TrainingArguments' defaults.
        problems.clear();
        const auto few = from_json_text(R"({"per_device_train_batch_size": 16, "lr_scheduler_type": "constant_with_warmup",
                                            "warmup_steps": 5, "report_to": ["tensorboard"], "disable_tqdm": true})",
                                        RunConfig{}, problems);
        QVERIFY(problems.empty());
        QCOMPARE(few.batch_size, std::int64_t(16));
        QCOMPARE(few.learning_rate, 5e-5);
        QCOMPARE(few.accumulation_steps, std::int64_t(1));
        QCOMPARE(few.epochs, std::int64_t(3));
        QCOMPARE(few.logging_steps, std::int64_t(500));
        QCOMPARE(few.scheduler, SchedulerKind::Constant);
        QCOMPARE(few.warmup_steps, std::int64_t(5));
        QCOMPARE(few.report_to, std::string("tensorboard"));
        QVERIFY(few.disable_tqdm);
        // get_constant_schedule has no warm-up, whatever warmup_steps says.
        const auto constant = from_json_text(R"({"lr_scheduler_type": "constant", "warmup_steps": 5})", RunConfig{},
                                             problems);
        QVERIFY(problems.empty());
        QCOMPARE(constant.warmup_steps, std::int64_t(0));
        // An accum-run option beside the fields is read as one.
        const auto mixed = from_json_text(R"({"per_device_train_batch_size": 16, "dataset": "synthetic-lm"})",
                                          RunConfig{}, problems);
        QVERIFY(problems.empty());
        QCOMPARE(mixed.dataset, DatasetKind::SyntheticLm);
        // accum-run's own files are read as before (learning_rate is an option's spelling).
        const auto own = from_json_text(R"({"learning_rate": 0.5, "batch_size": 8})", RunConfig{}, problems);
        QVERIFY(problems.empty());
        QCOMPARE(own.mode, Mode::Pytorch);
        QCOMPARE(own.accumulation_steps, RunConfig{}.accumulation_steps);
    }

    // A field set to something the engine does not implement: refused, naming
    // the field and its value.
    void unimplementedFieldsAreRefused_data() {
        QTest::addColumn<QString>("changes");
        QTest::addColumn<QString>("named");
        QTest::newRow("optim") << R"({"optim": "adafactor"})" << "optim = \"adafactor\"";
        QTest::newRow("label smoothing") << R"({"label_smoothing_factor": 0.1})" << "label_smoothing_factor = 0.1";
        QTest::newRow("fractional epochs") << R"({"num_train_epochs": 1.5})" << "num_train_epochs = 1.5";
        QTest::newRow("wandb") << R"({"report_to": ["wandb"]})" << "report_to = [\"wandb\"]";
        QTest::newRow("beta2") << R"({"adam_beta2": 0.98})" << "adam_beta2 = 0.98";
        QTest::newRow("scheduler") << R"({"lr_scheduler_type": "polynomial"})" << "lr_scheduler_type = \"polynomial\"";
        QTest::newRow("drop last") << R"({"dataloader_drop_last": true})" << "dataloader_drop_last = true";
        QTest::newRow("best model") << R"({"load_best_model_at_end": true})" << "load_best_model_at_end = true";
        QTest::newRow("split batches") << R"({"accelerator_config": {"split_batches": true}})"
                                       << "accelerator_config.split_batches = true";
        QTest::newRow("unknown") << R"({"colour": 3})" << "colour";
    }
    void unimplementedFieldsAreRefused() {
        QFETCH(QString, changes);
        QFETCH(QString, named);
        std::vector<ConfigProblem> problems;
        auto j = fixture_json("plain.json");
        const auto change = nlohmann::json::parse(changes.toStdString());
        for (const auto& [key, value] : change.items()) j[key] = value;
        from_json_text(j.dump(), RunConfig{}, problems);
        QCOMPARE(problems.size(), std::size_t(1));
        QVERIFY2(QString::fromStdString(problems.front().to_string()).contains(named),
                 problems.front().to_string().c_str());

        // accum-run: exit 2, the field on stderr, before anything runs.
        QTemporaryDir dir;
        const auto r = run_cli({"--config", variant(dir, "plain.json", change), "--output-dir", dir.filePath("run")});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains(named), qPrintable(r.err));
        QVERIFY(!QFile::exists(dir.filePath("run/accum_config.json")));
    }

    // Each fixture runs as the options it stands for: the same accum_config.json, the
    // same step losses (both runs complete, no loss NaN).
    void fixturesRunAsTheirOptions_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QStringList>("options");
        QTest::newRow("plain") << "plain.json"
                               << QStringList{"--mode", "trainer", "--batch-size", "64", "--accumulation-steps", "4",
                                              "--epochs", "1", "--lr", "0.001", "--optimizer", "adamw", "--scheduler",
                                              "linear", "--max-grad-norm", "1", "--logging-steps", "5",
                                              "--eval-strategy", "no", "--save-strategy", "no", "--seed", "42"};
        QTest::newRow("cosine bf16") << "cosine_bf16.json"
                                     << QStringList{"--mode", "trainer", "--batch-size", "64", "--accumulation-steps",
                                                    "4", "--epochs", "1", "--lr", "0.002", "--optimizer", "adamw",
                                                    "--scheduler", "cosine", "--warmup-ratio", "0.1", "--weight-decay",
                                                    "0.01", "--max-grad-norm", "0.5", "--bf16", "--device", "cpu",
                                                    "--logging-steps", "4", "--eval-strategy", "no",
                                                    "--save-strategy", "no", "--seed", "42"};
        QTest::newRow("steps sgd") << "steps_sgd.json"
                                   << QStringList{"--mode", "trainer", "--batch-size", "32", "--accumulation-steps",
                                                  "2", "--max-steps", "30", "--lr", "0.05", "--optimizer", "sgd",
                                                  "--momentum", "0", "--scheduler", "linear", "--max-grad-norm", "1",
                                                  "--logging-steps", "10", "--eval-strategy", "steps", "--eval-steps",
                                                  "10", "--save-strategy", "steps", "--save-steps", "15",
                                                  "--save-total-limit", "1", "--seed", "7"};
    }
    void fixturesRunAsTheirOptions() {
        QFETCH(QString, file);
        QFETCH(QStringList, options);
        QTemporaryDir dir;
        const auto from_file = run_cli(QStringList{"--config", fixture(file), "--output-dir", dir.filePath("file")} + kData);
        QVERIFY2(from_file.exit_code == 0, qPrintable(from_file.err));
        const auto from_options = run_cli(options + kData + QStringList{"--output-dir", dir.filePath("options")});
        QVERIFY2(from_options.exit_code == 0, qPrintable(from_options.err));
        QCOMPARE(written_config(dir.filePath("file")), written_config(dir.filePath("options")));

        const auto a = read_steps(dir.filePath("file/metrics.jsonl"));
        const auto b = read_steps(dir.filePath("options/metrics.jsonl"));
        QVERIFY(!a.empty());
        QCOMPARE(a.size(), b.size());
        for (std::size_t i = 0; i < a.size(); ++i) {
            QVERIFY(std::isfinite(a[i].loss) && std::isfinite(b[i].loss));
            QCOMPARE(a[i].loss, b[i].loss);
            QCOMPARE(a[i].learning_rate, b[i].learning_rate);
        }
        if (file == "cosine_bf16.json") {
            // 4000 samples / 64 = 63 micro-batches, / 4 = 16 optimizer steps;
            // get_warmup_steps: ceil(16 × 0.1) = 2 steps of warm-up, so the
            // rate climbs 0, lr/2, lr, then follows the cosine down.
            QCOMPARE(a.size(), std::size_t(16));
            QCOMPARE(a[0].learning_rate, 0.0);
            QCOMPARE(a[1].learning_rate, 0.001);
            QCOMPARE(a[2].learning_rate, 0.002);
            QVERIFY(a[3].learning_rate < 0.002);
        }
        if (file == "steps_sgd.json") {
            QCOMPARE(a.size(), std::size_t(30));
            // run_name, dataloader_num_workers and do_eval do not change training: one note names them.
            QCOMPARE(from_file.err.count("ignored:"), 1);
            QVERIFY2(from_file.err.contains("run_name") && from_file.err.contains("dataloader_num_workers"),
                     qPrintable(from_file.err));
        }
    }

    // Options on the command line win over the file's fields.
    void commandLineWins() {
        const auto parsed = cli::parse_arguments(
            {"--config", fixture("plain.json").toStdString(), "--batch-size", "16", "--lr", "0.01", "--disable-tqdm"});
        QVERIFY(parsed.problems.empty());
        QCOMPARE(parsed.config.batch_size, std::int64_t(16));
        QCOMPARE(parsed.config.learning_rate, 0.01);
        QCOMPARE(parsed.config.accumulation_steps, std::int64_t(4)); // from the file
        QVERIFY(parsed.config.disable_tqdm);
        // --warmup-ratio is a share of the run's steps: in [0, 1].
        const auto bad = cli::parse_arguments({"--warmup-ratio", "1.5"});
        QCOMPARE(bad.problems.size(), std::size_t(1));
        QCOMPARE(bad.problems.front().option, std::string("warmup-ratio"));
    }
};

QTEST_GUILESS_MAIN(TestTrainingArgs)
#include "test_training_args.moc"

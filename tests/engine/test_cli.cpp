// accum-run end to end, as a separate process: files, JSON Lines, exit codes, signals.
#include <QtTest/QtTest>

#include <cmath>
#include <csignal>
#include <map>

#include "accum/metrics_io.h"

#include "capture.h"
#include "processes.h"

using namespace accum;

namespace {

using Result = testing::CliResult;
using testing::read_records;
using testing::read_steps;
using testing::run_cli;

// The kill -9 test's run: long enough for three checkpoints before the kill (and
// shorter under AddressSanitizer, where every step is several times slower).
#ifdef __SANITIZE_ADDRESS__
constexpr int kKillNineSteps = 120;
#else
constexpr int kKillNineSteps = 400;
#endif

using testing::have_fashion_mnist;

} // namespace

class TestCli : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void tinyRunWritesFiles() {
        QTemporaryDir dir;
        const auto r = run_cli({"--dataset", "synthetic-pairs", "--batch-size", "32", "--accumulation-steps", "2",
                                "--max-steps", "20", "--eval-strategy", "steps", "--eval-steps", "10", "--output-dir",
                                dir.path()});
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        QVERIFY(QFile::exists(dir.filePath("accum_config.json")));
        QVERIFY(QFile::exists(dir.filePath("summary.json")));
        const auto records = read_records(dir.filePath("metrics.jsonl"));
        QVERIFY(!records.empty());
        int steps = 0, evals = 0, memory = 0;
        for (const auto& rec : records) {
            if (const auto* s = std::get_if<StepRecord>(&rec)) {
                ++steps;
                QCOMPARE(s->step, std::int64_t(steps));
                QCOMPARE(s->micro_step, 2 * s->step);
                QCOMPARE(s->samples_seen, 64 * s->step);
                QVERIFY(s->peak_memory_bytes >= s->memory_bytes);
                QVERIFY(s->peak_memory_bytes > 0);
            }
            evals += std::holds_alternative<EvalRecord>(rec);
            memory += std::holds_alternative<MemoryRecord>(rec);
        }
        QCOMPARE(steps, 20);
        QCOMPARE(evals, 2);
        QVERIFY(memory >= 1);
        const auto* summary = std::get_if<SummaryRecord>(&records.back());
        QVERIFY(summary);
        QCOMPARE(summary->status, RunStatus::Completed);
        QCOMPARE(summary->optimizer_steps, std::int64_t(20));
        QVERIFY(r.out.contains("step 20/20"));
        // The written config reproduces the run.
        const auto again =
            run_cli({"--config", dir.filePath("accum_config.json"), "--output-dir", dir.filePath("again")});
        QCOMPARE(again.exit_code, 0);
    }

    // A benchmark's model switch set in the environment (ACCUM_CNN_CHECKPOINT:
    // engine/src/switches.h) makes the run differ from its options: accum_config.json
    // records it under "bench-switches" and the log says so once. That
    // accum_config.json still reproduces the options with --config, noting that the
    // switch is not set here; a run without switches writes no such key.
    void benchSwitchIsRecorded() {
        QTemporaryDir dir;
        auto args = [&](const QString& out) {
            return QStringList{"--dataset", "synthetic-pairs", "--batch-size", "16", "--max-steps", "3",
                               "--eval-strategy", "no", "--save-strategy", "no", "--output-dir", dir.filePath(out)};
        };
        auto config_of = [&](const QString& out) {
            QFile f(dir.filePath(out + "/accum_config.json"));
            return f.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(f.readAll()).object() : QJsonObject();
        };
        const auto r = run_cli(args("switched"), 240000, {"ACCUM_CNN_CHECKPOINT=checkpoint,checkpoint"});
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        const auto recorded = config_of("switched").value("bench-switches").toObject();
        QCOMPARE(recorded.value("ACCUM_CNN_CHECKPOINT").toString(), QString("checkpoint,checkpoint"));
        QCOMPARE(recorded.size(), 1);
        QCOMPARE(config_of("switched").value("batch-size").toInt(), 16); // the options beside it, as ever
        QCOMPARE(r.out.count("ACCUM_CNN_CHECKPOINT=checkpoint,checkpoint is set"), 1);

        const auto plain = run_cli(args("plain"));
        QVERIFY2(plain.exit_code == 0, qPrintable(plain.err));
        QVERIFY(!config_of("plain").isEmpty());
        QVERIFY(!config_of("plain").contains("bench-switches"));
        QVERIFY2(!plain.out.contains(" is set: "), qPrintable(plain.out));

        const auto again =
            run_cli({"--config", dir.filePath("switched/accum_config.json"), "--output-dir", dir.filePath("again")});
        QVERIFY2(again.exit_code == 0, qPrintable(again.err));
        QVERIFY2(again.err.contains("records ACCUM_CNN_CHECKPOINT=checkpoint,checkpoint") &&
                     again.err.contains("ACCUM_CNN_CHECKPOINT is not set"),
                 qPrintable(again.err));
        QVERIFY(!config_of("again").contains("bench-switches"));
        QCOMPARE(config_of("again").value("max-steps").toInt(), 3);
    }

    void badArgumentsExit2_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("fragment");
        QTest::newRow("batch 0") << QStringList{"--batch-size", "0"} << "--batch-size";
        QTest::newRow("batch text") << QStringList{"--batch-size", "many"} << "--batch-size";
        QTest::newRow("K 0") << QStringList{"--accumulation-steps", "0"} << "--accumulation-steps";
        QTest::newRow("mode") << QStringList{"--mode", "jax"} << "--mode";
        QTest::newRow("unknown") << QStringList{"--colour", "red"} << "--colour";
        QTest::newRow("lr") << QStringList{"--lr", "-1"} << "--lr";
        QTest::newRow("budget") << QStringList{"--memory-budget", "huge"} << "--memory-budget";
        QTest::newRow("no length") << QStringList{"--epochs", "0"} << "--epochs";
        QTest::newRow("config missing") << QStringList{"--config", "/nonexistent.json"} << "--config";
        // A word after a switch is blamed on the switch, a stray word on nothing.
        QTest::newRow("switch value") << QStringList{"--gradient-checkpointing", "maybe"}
                                      << "--gradient-checkpointing: takes no value";
        QTest::newRow("stray word") << QStringList{"--lr", "0.1", "stray"} << "accum-run: unexpected argument 'stray'";
    }
    void badArgumentsExit2() {
        QFETCH(QStringList, args);
        QFETCH(QString, fragment);
        const auto r = run_cli(args);
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains(fragment), qPrintable(r.err));
    }

    void missingDataExit4() {
        QTemporaryDir dir;
        const auto r = run_cli({"--data", dir.filePath("nothing"), "--output-dir", dir.filePath("out")});
        QCOMPARE(r.exit_code, 4);
        QVERIFY2(r.err.contains("apt-get install dataset-fashion-mnist"), qPrintable(r.err));
        QVERIFY(r.err.contains("--data DIR"));
    }

    void outOfMemoryExit3() {
        if (!have_fashion_mnist()) QSKIP("no dataset");
        QTemporaryDir dir;
        const auto r = run_cli({"--model", "cnn", "--batch-size", "256", "--accumulation-steps", "1", "--memory-budget",
                                "40MiB", "--max-steps", "3", "--output-dir", dir.path()});
        QCOMPARE(r.exit_code, 3);
        // The suggestion is measured (with and without gradient checkpointing, the
        // faster of the two that fit), and it runs.
        QVERIFY2(r.err.contains("out of memory at micro-batch 256") && r.err.contains("Try micro-batch ") &&
                     r.err.contains("measured to fit"),
                 qPrintable(r.err));
        const auto records = read_records(dir.filePath("metrics.jsonl"));
        QVERIFY(!records.empty());
        const auto summary = std::get<SummaryRecord>(records.back());
        QCOMPARE(summary.status, RunStatus::OutOfMemory);
        QTemporaryDir again;
        QStringList again_args{"--model", "cnn", "--batch-size", QString::number(summary.suggested_batch_size),
                               "--accumulation-steps", QString::number(summary.suggested_accumulation_steps),
                               "--memory-budget", "40MiB", "--max-steps", "3", "--output-dir", again.path()};
        if (summary.suggested_gradient_checkpointing) again_args << "--gradient-checkpointing";
        const auto ok = run_cli(again_args);
        QVERIFY2(ok.exit_code == 0, qPrintable(ok.err));
    }

    void trainerTwoEpochsLogsAndCheckpoints() {
        QTemporaryDir dir;
        const auto r = run_cli({"--mode", "trainer", "--dataset", "synthetic-pairs", "--batch-size", "64",
                                "--accumulation-steps", "4", "--epochs", "2", "--output-dir", dir.path()});
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        QCOMPARE(r.out.count(QRegularExpression(R"(\{'eval_loss': [0-9.]+, 'eval_accuracy': [0-9.]+, 'eval_f1': [0-9.]+, 'eval_runtime': [0-9.e-]+, 'eval_samples_per_second': [0-9.e+-]+, 'eval_steps_per_second': [0-9.e+-]+, 'epoch': [12]\.0\})")), 2);
        const QStringList checkpoints = QDir(dir.path()).entryList({"checkpoint-*"}, QDir::Dirs);
        QCOMPARE(checkpoints.size(), 2);
        for (const auto& c : checkpoints) {
            QFile state(dir.filePath(c + "/trainer_state.json"));
            QVERIFY(state.open(QIODevice::ReadOnly));
            const auto json = QJsonDocument::fromJson(state.readAll()).object();
            QVERIFY(json.contains("log_history") && json.contains("global_step") && json.contains("epoch"));
            QCOMPARE(c, "checkpoint-" + QString::number(json["global_step"].toInteger()));
        }
    }

    void interruptExit130() {
        QTemporaryDir dir;
        QProcess p;
        p.start(ACCUM_RUN_EXE, {"--dataset", "synthetic-pairs", "--epochs", "1000", "--output-dir", dir.path()});
        QVERIFY(p.waitForStarted());
        QTRY_VERIFY_WITH_TIMEOUT(QFileInfo(dir.filePath("metrics.jsonl")).size() > 200, 30000);
        ::kill(static_cast<pid_t>(p.processId()), SIGINT);
        QVERIFY(p.waitForFinished(10000));
        QCOMPARE(p.exitCode(), 130);
        const auto records = read_records(dir.filePath("metrics.jsonl"));
        QVERIFY(!records.empty());
        QCOMPARE(std::get<SummaryRecord>(records.back()).status, RunStatus::Stopped);
    }

    // SIGTERM: the summary says stopped, a checkpoint is written, exit 130, and
    // every line of the metrics file parses.
    void terminateWritesCheckpoint() {
        QTemporaryDir dir;
        QProcess p;
        p.start(ACCUM_RUN_EXE, {"--dataset", "synthetic-pairs", "--epochs", "1000", "--save-strategy", "no",
                                "--output-dir", dir.path()});
        QVERIFY(p.waitForStarted());
        QTRY_VERIFY_WITH_TIMEOUT(QFileInfo(dir.filePath("metrics.jsonl")).size() > 2000, 30000);
        ::kill(static_cast<pid_t>(p.processId()), SIGTERM);
        QVERIFY(p.waitForFinished(10000));
        QCOMPARE(p.exitCode(), 130);
        const auto records = read_records(dir.filePath("metrics.jsonl"));
        QVERIFY(!records.empty());
        QCOMPARE(std::get<SummaryRecord>(records.back()).status, RunStatus::Stopped);
        // --save-strategy no means no periodic checkpoints; a stop still writes none.
        QVERIFY(QDir(dir.path()).entryList({"checkpoint-*"}, QDir::Dirs).isEmpty());

        QTemporaryDir dir2;
        QProcess q;
        q.start(ACCUM_RUN_EXE, {"--dataset", "synthetic-pairs", "--epochs", "1000", "--output-dir", dir2.path()});
        QVERIFY(q.waitForStarted());
        QTRY_VERIFY_WITH_TIMEOUT(QFileInfo(dir2.filePath("metrics.jsonl")).size() > 2000, 30000);
        ::kill(static_cast<pid_t>(q.processId()), SIGTERM);
        QVERIFY(q.waitForFinished(10000));
        QCOMPARE(q.exitCode(), 130);
        const auto records2 = read_records(dir2.filePath("metrics.jsonl"));
        QVERIFY(!records2.empty());
        const auto last = std::get<SummaryRecord>(records2.back());
        QVERIFY2(QDir(dir2.path()).exists("checkpoint-" + QString::number(last.optimizer_steps)), last.message.c_str());
    }

    // kill -9 in the middle of a run, then --resume: the metrics file is valid
    // line by line and the combined losses equal an uninterrupted run's (1e-5).
    void killNineThenResume() {
        if (!have_fashion_mnist()) QSKIP("no dataset");
        const QStringList common{"--dataset", "fashion-mnist", "--model", "mlp", "--batch-size", "64",
                                 "--accumulation-steps", "4", "--max-steps", QString::number(kKillNineSteps),
                                 "--save-strategy", "steps",
                                 "--save-steps", "25", "--eval-strategy", "no", "--dropout", "0.1", "--quiet"};
        QTemporaryDir full_dir, dir;
        QCOMPARE(run_cli(common + QStringList{"--output-dir", full_dir.path()}).exit_code, 0);

        QProcess p;
        p.start(ACCUM_RUN_EXE, common + QStringList{"--output-dir", dir.path()});
        QVERIFY(p.waitForStarted());
        QTRY_VERIFY_WITH_TIMEOUT(QDir(dir.path()).entryList({"checkpoint-*"}, QDir::Dirs).size() >= 3, 60000);
        ::kill(static_cast<pid_t>(p.processId()), SIGKILL);
        QVERIFY(p.waitForFinished(10000));
        // Written line by line: every complete line parses; only an unterminated
        // last line may have been cut by the kill. Three checkpoints of 25 steps
        // were written before it.
        QVERIFY(read_steps(dir.filePath("metrics.jsonl"), testing::FileState::MayBeCut).size() >= 75);

        const auto r = run_cli(common + QStringList{"--output-dir", dir.path(), "--resume", dir.path()});
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        const auto resumed = read_steps(dir.filePath("metrics.jsonl"));
        const auto full = read_steps(full_dir.filePath("metrics.jsonl"));
        QCOMPARE(full.size(), std::size_t(kKillNineSteps));
        const auto same = testing::compare_losses(full, resumed);
        QVERIFY2(same.within(1e-5), same.what().c_str());
    }

    // A damaged newest checkpoint given to --resume (the run's directory, or the
    // checkpoint itself) is refused with exit 4: the message names the checkpoint,
    // the file and what is wrong, and the newest intact checkpoint, and carries no
    // LibTorch backtrace (that goes to the run's log). Resuming from the one it
    // names then completes.
    void damagedCheckpointNamesTheIntactOne_data() {
        QTest::addColumn<QStringList>("damage"); // "checkpoint-N/file:how", how = truncate | garble | remove
        QTest::addColumn<QString>("file");       // the file the message names
        QTest::addColumn<int>("intact");         // the checkpoint it names
        QTest::newRow("truncated model.safetensors")
            << QStringList{"checkpoint-6/model.safetensors:truncate"} << "model.safetensors" << 4;
        QTest::newRow("damaged accum_state.json")
            << QStringList{"checkpoint-6/accum_state.json:garble"} << "accum_state.json" << 4;
        QTest::newRow("damaged trainer_state.json")
            << QStringList{"checkpoint-6/trainer_state.json:truncate"} << "trainer_state.json" << 4;
        QTest::newRow("missing optimizer.pt") << QStringList{"checkpoint-6/optimizer.pt:remove"} << "optimizer.pt" << 4;
        QTest::newRow("two damaged")
            << QStringList{"checkpoint-6/model.safetensors:truncate", "checkpoint-4/rng_state.pt:garble"}
            << "model.safetensors" << 2;
    }
    void damagedCheckpointNamesTheIntactOne() {
        QFETCH(QStringList, damage);
        QFETCH(QString, file);
        QFETCH(int, intact);
        QTemporaryDir dir;
        const QStringList common{"--dataset", "synthetic-pairs", "--batch-size", "16", "--accumulation-steps", "2",
                                 "--save-strategy", "steps", "--save-steps", "2", "--eval-strategy", "no",
                                 "--output-dir", dir.path()};
        const auto first = run_cli(common + QStringList{"--max-steps", "6", "--quiet"});
        QVERIFY2(first.exit_code == 0, qPrintable(first.err));
        for (const QString& d : damage) {
            const QString path = dir.filePath(d.section(':', 0, 0)), how = d.section(':', 1);
            QFile f(path);
            QVERIFY2(f.exists(), qPrintable(path));
            if (how == "remove") {
                QVERIFY(f.remove());
            } else if (how == "truncate") {
                QVERIFY(f.resize(f.size() / 2));
            } else { // garble: the first bytes overwritten, the size kept
                QVERIFY(f.open(QIODevice::ReadWrite));
                QVERIFY(f.write(QByteArray(64, '#')) == 64);
            }
        }
        const QString newest = dir.filePath("checkpoint-6");
        const QString named = dir.filePath("checkpoint-" + QString::number(intact));
        for (const QString& resume : {dir.path(), newest}) {
            const auto r = run_cli(common + QStringList{"--max-steps", "8", "--resume", resume});
            QCOMPARE(r.exit_code, 4);
            for (const QString& part : {newest + " is not a usable checkpoint: " + file,
                                        "the newest intact checkpoint is " + named + " (step " +
                                            QString::number(intact) + "): continue from it with --resume " + named})
                QVERIFY2(r.err.contains(part), qPrintable(r.err + "\nwanted: " + part));
            // No backtrace in the whole output (the log's lines on stdout, the
            // message on stderr): LibTorch's whole text is in the run's log.txt only.
            for (const char* backtrace : {"frame #", "Exception raised from"})
                QVERIFY2(!r.err.contains(backtrace) && !r.out.contains(backtrace), qPrintable(r.out + r.err));
            if (file == "model.pt") {
                QVERIFY2(r.out.contains("--resume: reading " + newest), qPrintable(r.out));
                QFile log(dir.filePath("log.txt"));
                QVERIFY2(log.open(QIODevice::ReadOnly), qPrintable(log.fileName()));
                QVERIFY(log.readAll().contains(("--resume: reading " + newest).toUtf8()));
            }
            const auto records = read_records(dir.filePath("metrics.jsonl"));
            QVERIFY(!records.empty());
            const auto* summary = std::get_if<SummaryRecord>(&records.back());
            QVERIFY(summary);
            QCOMPARE(summary->exit_code, 4);
            QVERIFY2(QString::fromStdString(summary->message).contains(named), summary->message.c_str());
            QVERIFY2(!QString::fromStdString(summary->message).contains("frame #"), summary->message.c_str());
        }
        const auto resumed = run_cli(common + QStringList{"--max-steps", "8", "--resume", named, "--quiet"});
        QVERIFY2(resumed.exit_code == 0, qPrintable(resumed.err));
        const auto steps = read_steps(dir.filePath("metrics.jsonl"));
        QCOMPARE(steps.size(), std::size_t(8));
        QCOMPARE(steps.back().step, std::int64_t(8));
    }

    // An intact checkpoint of another optimizer: refused as not fitting the run,
    // not as damaged, and no earlier checkpoint offered (it would not fit either).
    void checkpointOfAnotherOptimizerIsNotCalledDamaged() {
        QTemporaryDir dir;
        const QStringList common{"--dataset", "synthetic-pairs", "--batch-size", "16", "--accumulation-steps", "2",
                                 "--save-strategy", "steps", "--save-steps", "2", "--eval-strategy", "no",
                                 "--output-dir", dir.path()};
        const auto first = run_cli(common + QStringList{"--max-steps", "4", "--quiet"});
        QVERIFY2(first.exit_code == 0, qPrintable(first.err));
        const auto r = run_cli(common + QStringList{"--max-steps", "6", "--optimizer", "adamw", "--resume",
                                                    dir.filePath("checkpoint-4")});
        QCOMPARE(r.exit_code, 4);
        QVERIFY2(r.err.contains(dir.filePath("checkpoint-4") + " does not fit this run: optimizer.pt: it is the state of torch.optim.SGD, this run's optimizer is AdamW"),
                 qPrintable(r.err));
        QVERIFY2(r.err.contains("resume with the --model and --optimizer it was written with"), qPrintable(r.err));
        for (const char* wrong : {"is not a usable checkpoint", "newest intact", "frame #", "Exception raised from"})
            QVERIFY2(!r.err.contains(wrong), qPrintable(r.err));
    }

    // A checkpoint of the previous engine (model.pt and accum_optimizer.pt,
    // LibTorch's archives: tests/engine/data/previous-checkpoint, written by a
    // build of this LibTorch) resumes: the
    // steps after it have the losses of today's uninterrupted run. And today's
    // checkpoint holds the weights and the optimizer state once each.
    void previousCheckpointFormatResumes() {
        QTemporaryDir dir;
        const QStringList common{"--dataset", "synthetic-pairs", "--batch-size", "16", "--accumulation-steps", "2",
                                 "--eval-strategy", "no", "--max-steps", "6", "--device", "cpu", "--quiet"};
        const auto full = run_cli(common + QStringList{"--save-strategy", "steps", "--save-steps", "4",
                                                       "--output-dir", dir.filePath("full")});
        QVERIFY2(full.exit_code == 0, qPrintable(full.err));
        QDir written(dir.filePath("full/checkpoint-4"));
        QCOMPARE(written.entryList(QDir::Files, QDir::Name),
                 QStringList({"accum_state.json", "model.safetensors", "optimizer.pt", "rng_state.pt", "scheduler.pt",
                              "trainer_state.json"}));
        const QString previous = QStringLiteral(ACCUM_PREVIOUS_CHECKPOINT);
        QVERIFY(QFile::exists(previous + "/model.pt") && QFile::exists(previous + "/accum_optimizer.pt"));
        const auto resumed = run_cli(common + QStringList{"--save-strategy", "no", "--output-dir",
                                                          dir.filePath("resumed"), "--resume", previous});
        QVERIFY2(resumed.exit_code == 0, qPrintable(resumed.err));
        const auto whole = read_steps(dir.filePath("full/metrics.jsonl"));
        const auto after = read_steps(dir.filePath("resumed/metrics.jsonl"));
        QCOMPARE(whole.size(), std::size_t(6));
        QCOMPARE(after.size(), std::size_t(2));
        const auto same = testing::compare_shared_steps(whole, after);
        QVERIFY2(same.within(1e-5), same.what().c_str());
    }

    void divergedExit5KeepsLastGoodCheckpoint() {
        if (!have_fashion_mnist()) QSKIP("no dataset");
        QTemporaryDir dir;
        const auto r = run_cli({"--lr", "50", "--momentum", "0.9", "--max-steps", "200", "--output-dir", dir.path(), "--quiet"});
        QCOMPARE(r.exit_code, 5);
        QRegularExpression re("non-finite at optimizer step (\\d+)");
        const auto m = re.match(r.err);
        QVERIFY2(m.hasMatch(), qPrintable(r.err));
        const int bad = m.captured(1).toInt();
        QVERIFY(QDir(dir.path()).exists("checkpoint-" + QString::number(bad - 1)));
        const auto skipped = run_cli({"--lr", "50", "--momentum", "0.9", "--max-steps", "50", "--skip-nonfinite",
                                      "--output-dir", dir.filePath("skip"), "--quiet"});
        QCOMPARE(skipped.exit_code, 0);
        QVERIFY(skipped.out.contains("skipped as non-finite"));
    }

    // A second run into a directory that holds a run is an error that names the
    // directory and the ways out, and leaves the first run's files as they were;
    // --resume without --config continues the run with its own record's options
    // (accum_config.json, or an older run's config.json), in its own directory,
    // saying so: the losses are the uninterrupted run's, where the defaults would
    // train another run. A directory whose config.json is a model's and that has
    // no record is refused with the recipe, and so is that config.json given to --config.
    void resumeAloneTakesTheRunsRecord() {
        QTemporaryDir dir;
        const QStringList options{"--dataset", "synthetic-pairs", "--batch-size", "16", "--accumulation-steps", "3",
                                  "--max-steps", "6", "--lr", "0.02", "--save-strategy", "steps", "--save-steps", "3",
                                  "--eval-strategy", "no"};
        for (const QString run : {"new", "older"}) {
            const QString out = dir.filePath(run);
            const auto first = run_cli(options + QStringList{"--output-dir", out});
            QVERIFY2(first.exit_code == 0, qPrintable(first.err));
            const auto full = read_steps(out + "/metrics.jsonl");
            QCOMPARE(full.size(), std::size_t(6));
            QString record = out + "/accum_config.json";
            if (run == "older") { // as an older engine left it: the record under config.json
                QVERIFY(QFile::rename(record, out + "/config.json"));
                record = out + "/config.json";
            }
            const auto resumed = run_cli({"--resume", out + "/checkpoint-3"});
            QVERIFY2(resumed.exit_code == 0, qPrintable(resumed.err));
            for (const QString& part : QStringList{"--resume " + out + "/checkpoint-3 without --config: the run's "
                                                   "options are its record's, " + record,
                                                   "micro-batch 16 × 3", "writing " + out})
                QVERIFY2(resumed.out.contains(part), qPrintable(resumed.out + "\nwanted: " + part));
            const auto same = testing::compare_losses(full, read_steps(out + "/metrics.jsonl"));
            QVERIFY2(same.within(1e-7), same.what().c_str());
        }
        // No record: the older run's config.json is the model's (as older engines
        // left a completed run of a Hugging Face module).
        const QString older = dir.filePath("older");
        QVERIFY(QFile::remove(older + "/accum_config.json")); // the resumed run's
        {
            QFile model_config(older + "/config.json");
            QVERIFY(model_config.open(QIODevice::WriteOnly | QIODevice::Truncate));
            model_config.write(R"({"architectures": ["BertForSequenceClassification"], "model_type": "bert"})");
        }
        const auto alone = run_cli({"--resume", older});
        QCOMPARE(alone.exit_code, 2);
        for (const QString& part : QStringList{"--resume: " + older + " holds no run record (accum_config.json",
                                               "--config FILE --resume " + older})
            QVERIFY2(alone.err.contains(part), qPrintable(alone.err + "\nwanted: " + part));
        const auto model_config = run_cli({"--config", older + "/config.json", "--resume", older});
        QCOMPARE(model_config.exit_code, 2);
        QVERIFY2(model_config.err.contains("--config: " + older + "/config.json is a model's config"),
                 qPrintable(model_config.err));
    }

    // --overwrite-output-dir replaces them.
    void secondRunIntoTheSameDirectory() {
        QTemporaryDir dir;
        const QStringList args{"--dataset", "synthetic-pairs", "--batch-size", "32", "--accumulation-steps", "2",
                               "--max-steps", "4", "--eval-strategy", "no", "--quiet", "--output-dir", dir.path()};
        QCOMPARE(run_cli(args).exit_code, 0);
        auto read = [&](const char* name) {
            QFile f(dir.filePath(name));
            return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
        };
        const QByteArray config = read("accum_config.json"), metrics = read("metrics.jsonl"), summary = read("summary.json");
        QVERIFY(!config.isEmpty() && !metrics.isEmpty() && !summary.isEmpty());
        const auto again = run_cli(args);
        QCOMPARE(again.exit_code, 2);
        for (const char* part : {"--output-dir", "already holds a run", "--resume", "--overwrite-output-dir",
                                 "another --output-dir"})
            QVERIFY2(again.err.contains(part), qPrintable(again.err));
        QVERIFY2(again.err.contains(dir.path()), qPrintable(again.err));
        QCOMPARE(read("accum_config.json"), config);
        QCOMPARE(read("metrics.jsonl"), metrics);
        QCOMPARE(read("summary.json"), summary);

        const auto replaced = run_cli(args + QStringList{"--overwrite-output-dir", "--seed", "3"});
        QVERIFY2(replaced.exit_code == 0, qPrintable(replaced.err));
        QVERIFY(read("accum_config.json").contains("\"seed\": 3"));
        QVERIFY(read("metrics.jsonl") != metrics);
        QVERIFY(read("summary.json") != summary);
        QCOMPARE(QDir(dir.path()).entryList({"checkpoint-*"}, QDir::Dirs), QStringList{"checkpoint-4"});
    }

    // Without --output-dir each run gets its own runs/<time> directory, even two
    // started within the same second.
    void defaultDirectoriesAreUnique() {
        QTemporaryDir work;
        const QStringList args{"--dataset", "synthetic-pairs", "--max-steps", "2", "--eval-strategy", "no", "--quiet"};
        QProcess a, b;
        for (QProcess* p : {&a, &b}) {
            p->setWorkingDirectory(work.path());
            p->start(ACCUM_RUN_EXE, args);
        }
        for (QProcess* p : {&a, &b}) {
            QVERIFY(p->waitForFinished(120000));
            QCOMPARE(p->exitCode(), 0);
        }
        const auto dirs = QDir(work.filePath("runs")).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
        QCOMPARE(dirs.size(), 2);
        for (const auto& d : dirs) QVERIFY(QFile::exists(work.filePath("runs/" + d + "/summary.json")));
    }

    // The commands besides training: help, version, devices, plan.
    void otherCommands() {
        const auto help = run_cli({"--help"});
        QCOMPARE(help.exit_code, 0);
        for (const char* option : {"--mode", "--batch-size", "--accumulation-steps", "--cpu-kernels",
                                   "--overwrite-output-dir", "Exit codes"})
            QVERIFY2(help.out.contains(option), option);
        // Every exit code of docs/accum-run.md, 1 (a bug) among them, wrapped as it may be.
        for (const char* code : {"0 completed", "1 internal error", "4 data missing", "130 interrupted"})
            QVERIFY2(help.out.simplified().contains(code), code);
        const auto version = run_cli({"--version"});
        QCOMPARE(version.exit_code, 0);
        QVERIFY2(version.out.startsWith("accum engine ") && version.out.contains("LibTorch"), qPrintable(version.out));
        const auto devices = run_cli({"devices"});
        QCOMPARE(devices.exit_code, 0);
        QVERIFY2(devices.out.startsWith("cpu\tavailable"), qPrintable(devices.out));
        QVERIFY(devices.out.contains("cuda"));
        const auto unknown = run_cli({"fly"});
        QCOMPARE(unknown.exit_code, 2);
        QVERIFY(unknown.err.contains("unknown command 'fly'"));
    }

    // accum-run plan: a pick that fits (exit 0, JSON with the pick) and a budget
    // nothing fits (exit 3); the planner's numbers are tested in test_styles.
    void planCommand() {
        if (!have_fashion_mnist()) QSKIP("no dataset");
        const auto fits = run_cli({"plan", "--model", "cnn", "--target-batch", "256", "--memory-budget", "40MiB",
                                   "--threads", "1", "--quiet"});
        QVERIFY2(fits.exit_code == 0, qPrintable(fits.err));
        const auto plan = QJsonDocument::fromJson(fits.out.toUtf8()).object();
        QVERIFY2(plan["feasible"].toBool() && plan["verified"].toBool(), qPrintable(fits.out));
        QCOMPARE(plan["batch_size"].toInteger() * plan["accumulation_steps"].toInteger(), 256);
        const auto none = run_cli({"plan", "--model", "cnn", "--target-batch", "256", "--memory-budget", "4MiB",
                                   "--threads", "1", "--quiet"});
        QCOMPARE(none.exit_code, 3);
        QVERIFY2(none.err.contains("plan:"), qPrintable(none.err));
        const auto no_budget = run_cli({"plan", "--target-batch", "256"});
        QCOMPARE(no_budget.exit_code, 2);
        QVERIFY(no_budget.err.contains("--memory-budget"));
    }

    // The gradient noise scale (docs/noise-scale.md): a run with K ≥ 2 records the
    // window's raw figures and the running estimate (step records, summary, log
    // line); K = 1 in one process has no two batch sizes (null). plan weighs a
    // target against a measured figure, given or read from a run's summary.json,
    // and refuses what is not one, naming the option.
    void noiseScaleRecordedAndPlanned() {
        QTemporaryDir dir;
        const QString measured = dir.filePath("measured"), single = dir.filePath("single");
        const QStringList common{"--dataset", "synthetic-pairs", "--batch-size", "32", "--max-steps", "40",
                                 "--eval-strategy", "no", "--save-strategy", "no", "--disable-tqdm"};
        const auto r = run_cli(common + QStringList{"--accumulation-steps", "4", "--output-dir", measured});
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        const auto steps = read_steps(measured + "/metrics.jsonl");
        QCOMPARE(int(steps.size()), 40);
        int partial = 0;
        for (const auto& s : steps) {
            QVERIFY(std::isfinite(s.grad_norm_sq_big) && s.grad_norm_sq_big > 0);
            if (s.batch_big == 32.0) { // the epoch's 125th micro-batch, a window of one: no smaller batch
                QVERIFY(std::isnan(s.grad_norm_sq_small) && s.batch_small == 0.0);
                ++partial;
                continue;
            }
            QCOMPARE(s.batch_small, 32.0);
            QCOMPARE(s.batch_big, 128.0);
            QVERIFY(std::isfinite(s.grad_norm_sq_small) && s.grad_norm_sq_small > 0);
        }
        QCOMPARE(partial, 1);
        const auto records = read_records(measured + "/metrics.jsonl");
        const auto* summary = std::get_if<SummaryRecord>(&records.back());
        QVERIFY(summary && std::isfinite(summary->noise_scale) && summary->noise_scale > 0);
        QCOMPARE(summary->noise_scale, steps.back().noise_scale);
        QVERIFY2(r.out.contains("noise_scale "), qPrintable(r.out));

        const auto k1 = run_cli(common + QStringList{"--accumulation-steps", "1", "--max-steps", "5", "--output-dir", single});
        QVERIFY2(k1.exit_code == 0, qPrintable(k1.err));
        for (const auto& s : read_steps(single + "/metrics.jsonl")) {
            QVERIFY(std::isnan(s.noise_scale) && std::isnan(s.grad_norm_sq_small));
            QCOMPARE(s.batch_small, 0.0);
        }
        QVERIFY(!k1.out.contains("noise_scale"));

        // 1024 against 100: far above; K = round(100 / 16) = 6 is the suggestion.
        const auto above = run_cli({"plan", "--target-batch", "1024", "--batch-size", "16", "--noise-scale", "100"});
        QVERIFY2(above.exit_code == 0, qPrintable(above.err));
        const auto advice = QJsonDocument::fromJson(above.out.toUtf8()).object();
        QCOMPARE(advice["position"].toString(), QString("above"));
        QCOMPARE(advice["suggested_accumulation_steps"].toInteger(), 6);
        QVERIFY(advice["estimate"].toBool());
        QVERIFY(advice["suggested_samples_ratio"].toDouble() < 1 && advice["suggested_steps_ratio"].toDouble() > 1);
        QVERIFY2(above.err.contains("estimate"), qPrintable(above.err));
        const auto below = run_cli({"plan", "--target-batch", "32", "--noise-scale=100"});
        QCOMPARE(QJsonDocument::fromJson(below.out.toUtf8()).object()["position"].toString(), QString("below"));
        const auto from = run_cli({"plan", "--target-batch", "256", "--noise-scale-from", measured});
        QVERIFY2(from.exit_code == 0, qPrintable(from.err));
        QCOMPARE(QJsonDocument::fromJson(from.out.toUtf8()).object()["noise_scale"].toDouble(), summary->noise_scale);

        for (const auto& [args, words] : std::vector<std::pair<QStringList, QString>>{
                 {{"--noise-scale-from", single}, "no measured noise scale"},
                 {{"--noise-scale-from", dir.filePath("missing")}, "No such file"},
                 {{"--noise-scale", "-3"}, "positive number"},
                 {{"--noise-scale", "many"}, "positive number"}}) {
            const auto bad = run_cli(QStringList{"plan", "--target-batch", "256"} + args);
            QCOMPARE(bad.exit_code, 2);
            QVERIFY2(bad.err.contains(args[0]) && bad.err.contains(words), qPrintable(bad.err));
        }
    }

    // accum-run estimate: the memory by category per dtype and the predicted peak
    // without training (its accuracy is tested in test_memory_runs), as text or
    // JSON; options are checked as for a run.
    void estimateCommand() {
        const auto text = run_cli({"estimate", "--dataset", "synthetic-pairs", "--model", "transformer",
                                   "--transformer-layers", "3", "--gradient-checkpointing", "--optimizer", "adamw"});
        QVERIFY2(text.exit_code == 0, qPrintable(text.err));
        for (const char* part : {"parameters", "gradients", "optimizer state", "Float", "per sample", "predicted peak",
                                 "x3 layers", "gradient checkpointing", "the whole process", "checkpoints included"})
            QVERIFY2(text.out.contains(QLatin1String(part)), qPrintable(text.out));
        const auto json = run_cli({"estimate", "--dataset", "synthetic-pairs", "--batch-size", "8", "--json"});
        QVERIFY2(json.exit_code == 0, qPrintable(json.err));
        const auto e = QJsonDocument::fromJson(json.out.toUtf8()).object();
        QVERIFY2(e["ok"].toBool() && e["predicted_peak_bytes"].toDouble() > e["parameters_bytes"].toDouble(),
                 qPrintable(json.out));
        QCOMPARE(e["optimizer_state_bytes"].toInteger(), e["parameters_bytes"].toInteger()); // SGD momentum: 1 ×
        QCOMPARE(e["probes"].toArray().size(), 2);
        // The whole process on the CPU: the tensors' peak, the process's own
        // memory (measured: LibTorch alone is resident), a save's bound (the largest tensor).
        const double overhead = e["process_overhead_bytes"].toDouble(), save = e["save_bytes"].toDouble();
        QVERIFY2(overhead > 0 && save > 0 && save <= e["parameters_bytes"].toDouble(), qPrintable(json.out));
        QCOMPARE(e["process_bytes"].toDouble(), e["predicted_peak_bytes"].toDouble() + overhead + save);
        const auto bad = run_cli({"estimate", "--batch-size", "0"});
        QCOMPARE(bad.exit_code, 2);
        QVERIFY(bad.err.contains("--batch-size"));
        const auto misplaced = run_cli({"--json", "--max-steps", "1"});
        QCOMPARE(misplaced.exit_code, 2);
        QVERIFY(misplaced.err.contains("only applies to accum-run estimate"));
        const auto layers = run_cli({"--transformer-layers", "0"});
        QCOMPARE(layers.exit_code, 2);
        QVERIFY(layers.err.contains("--transformer-layers"));
    }

    // An output directory that cannot be written is exit 2, naming it.
    void unwritableOutputDirectory() {
        QTemporaryDir dir;
        QFile blocker(dir.filePath("file"));
        QVERIFY(blocker.open(QIODevice::WriteOnly));
        blocker.close();
        const auto r = run_cli({"--dataset", "synthetic-pairs", "--max-steps", "2", "--output-dir",
                                dir.filePath("file/run")});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains("--output-dir") && r.err.contains(dir.filePath("file/run")), qPrintable(r.err));
    }

    // The code panel's Python tab for the plain loop is a script that runs
    // (resources/code/pytorch_loop.py): from the engine's checkpoint at step 10,
    // on the same data in the same order, it gives the engine's losses for steps
    // 11-30 within 1e-5 (eager PyTorch, Debian's python3-torch).
    void pythonLoopContinuesTheEngine() {
        if (!have_fashion_mnist()) QSKIP("no dataset");
        QProcess probe;
        probe.start("/usr/bin/python3", {"-c", "import torch, numpy"});
        if (!probe.waitForFinished(60000) || probe.exitStatus() != QProcess::NormalExit || probe.exitCode() != 0)
            QSKIP("Debian's python3-torch is not installed (scripts/debian-packages.txt lists it)");
        QTemporaryDir dir;
        const auto r = run_cli({"--mode", "pytorch", "--model", "mlp", "--batch-size", "64", "--accumulation-steps", "4",
                                "--max-steps", "30", "--save-strategy", "steps", "--save-steps", "10",
                                "--eval-strategy", "no", "--seed", "3", "--quiet", "--output-dir", dir.path()});
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        std::map<std::int64_t, double> engine;
        for (const auto& rec : read_records(dir.filePath("metrics.jsonl")))
            if (const auto* s = std::get_if<StepRecord>(&rec)) engine[s->step] = s->loss;
        QCOMPARE(engine.size(), std::size_t(30));
        QProcess py;
        py.start("/usr/bin/python3", {ACCUM_SOURCE_DIR "/resources/code/pytorch_loop.py", "--checkpoint",
                                      dir.filePath("checkpoint-10"), "--steps", "20"});
        QVERIFY(py.waitForFinished(120000));
        QVERIFY2(py.exitCode() == 0, py.readAllStandardError().constData());
        int compared = 0;
        for (const QByteArray& line : py.readAllStandardOutput().split('\n')) {
            if (line.isEmpty()) continue;
            const auto o = QJsonDocument::fromJson(line).object();
            const auto step = o["step"].toInteger();
            QCOMPARE(step, std::int64_t(11 + compared));
            const double diff = std::abs(o["loss"].toDouble() - engine.at(step));
            QVERIFY2(diff <= 1e-5, qPrintable(QString("step %1: |Δ loss| %2").arg(step).arg(diff)));
            ++compared;
        }
        QCOMPARE(compared, 20);
    }

    // Acceptance of the foundation issue: the default experiment for 3 epochs
    // reaches eval_accuracy >= 0.85 (eager PyTorch in Python reaches 0.856 on the same experiment).
    void defaultExperimentAccuracy() {
        if (!have_fashion_mnist()) QSKIP("no dataset");
#ifdef __SANITIZE_ADDRESS__
        QSKIP("three epochs of instrumented kernels take minutes: the Release build checks this number");
#endif
        QTemporaryDir dir;
        const auto r = run_cli({"--mode", "pytorch", "--dataset", "fashion-mnist", "--model", "mlp", "--batch-size", "64",
                                "--accumulation-steps", "4", "--epochs", "3", "--lr", "0.05", "--optimizer", "sgd",
                                "--momentum", "0.9", "--seed", "0", "--output-dir", dir.path(), "--quiet"});
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        double accuracy = 0;
        int evals = 0;
        for (const auto& rec : read_records(dir.filePath("metrics.jsonl")))
            if (const auto* e = std::get_if<EvalRecord>(&rec)) {
                accuracy = e->eval_accuracy;
                ++evals;
            }
        QCOMPARE(evals, 3);
        qInfo("eval_accuracy after 3 epochs: %.4f", accuracy);
        QVERIFY2(accuracy >= 0.85, qPrintable(QString::number(accuracy)));
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
// SPDX-License-Identifier: GPL-3.0-or-later

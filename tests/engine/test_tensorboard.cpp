// SPDX-License-Identifier: GPL-3.0-or-later
// TensorBoard event files (--report-to tensorboard, engine/src/tensorboard_writer.h):
// the record framing against published CRC-32C vectors, the events a writer
// makes from records, and accum-run's files (a run, a SIGTERM, a wrong value).
// Each file is read back here record by record, every CRC checked, and each
// record parsed as an Event. That TensorBoard's own reader agrees, with the
// real Trainer's files beside them, is the peers case tensorboard_trainer.
#include <QtTest/QtTest>

#include <csignal>
#include <fstream>
#include <map>
#include <sstream>

#include "accum/run_config.h"
#include "metrics_file.h"
#include "proto/tensorboard_event.pb.h"
#include "tensorboard_writer.h"

using namespace accum;

namespace {

std::uint64_t read_le(const std::string& bytes, std::size_t at, int n) {
    std::uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= std::uint64_t(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
    return v;
}

// Every record of an event file; a bad length, CRC or Event fails the test.
std::vector<tensorboard::Event> read_events(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    std::vector<tensorboard::Event> events;
    std::size_t at = 0;
    while (at < bytes.size()) {
        if (bytes.size() - at < 12) {
            QTest::qFail("a record cut in its header", __FILE__, __LINE__);
            return {};
        }
        const auto length = read_le(bytes, at, 8);
        if (read_le(bytes, at + 8, 4) != tensorboard::masked_crc32c(std::string_view(bytes).substr(at, 8)) ||
            bytes.size() - at < 16 + length) {
            QTest::qFail(qPrintable(QString("bad record header at byte %1 of %2").arg(at).arg(path.c_str())), __FILE__,
                         __LINE__);
            return {};
        }
        const auto data = std::string_view(bytes).substr(at + 12, length);
        if (read_le(bytes, at + 12 + length, 4) != tensorboard::masked_crc32c(data)) {
            QTest::qFail(qPrintable(QString("bad data CRC at byte %1").arg(at)), __FILE__, __LINE__);
            return {};
        }
        tensorboard::Event e;
        if (!e.ParseFromArray(data.data(), static_cast<int>(data.size()))) {
            QTest::qFail("a record that is no Event", __FILE__, __LINE__);
            return {};
        }
        events.push_back(e);
        at += 16 + length;
    }
    return events;
}

// tag → [(step, value)], in file order.
std::map<std::string, std::vector<std::pair<std::int64_t, float>>> scalars(const std::vector<tensorboard::Event>& events) {
    std::map<std::string, std::vector<std::pair<std::int64_t, float>>> out;
    for (const auto& e : events)
        if (e.has_summary())
            for (const auto& v : e.summary().value()) out[v.tag()].emplace_back(e.step(), v.simple_value());
    return out;
}

// The one event file under <dir>/runs/<name>/.
QString event_file(const QString& dir) {
    QDirIterator it(dir + "/runs", {"events.out.tfevents.*"}, QDir::Files, QDirIterator::Subdirectories);
    QStringList found;
    while (it.hasNext()) found << it.next();
    if (found.size() != 1) return {};
    return found.front();
}

} // namespace

class TestTensorBoard : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // The check value of CRC-32C in the catalogue of CRCs ("123456789"), and
    // iSCSI's test vectors (RFC 3720, B.4): 32 bytes of 0x00, of 0xFF.
    void crc32cKnownVectors() {
        QCOMPARE(tensorboard::crc32c("123456789"), 0xE3069283u);
        QCOMPARE(tensorboard::crc32c(std::string(32, '\0')), 0x8A9136AAu);
        QCOMPARE(tensorboard::crc32c(std::string(32, '\xFF')), 0x62A8AB43u);
        // crc32c("") = 0: the mask alone, ((0 >> 15) | (0 << 17)) + 0xa282ead8.
        QCOMPARE(tensorboard::masked_crc32c(""), 0xa282ead8u);
        const std::uint32_t c = 0xE3069283u;
        QCOMPARE(tensorboard::masked_crc32c("123456789"), ((c >> 15) | (c << 17)) + 0xa282ead8u);
    }

    void framing() {
        const std::string r = tensorboard::framed_record("abc");
        QCOMPARE(r.size(), std::size_t(8 + 4 + 3 + 4));
        QCOMPARE(read_le(r, 0, 8), std::uint64_t(3));
        QCOMPARE(read_le(r, 8, 4), std::uint64_t(tensorboard::masked_crc32c(r.substr(0, 8))));
        QCOMPARE(r.substr(12, 3), std::string("abc"));
        QCOMPARE(read_le(r, 15, 4), std::uint64_t(tensorboard::masked_crc32c("abc")));
    }

    void logdirName() {
        // The Trainer's default_logdir(): datetime.now().strftime("%b%d_%H-%M-%S") + "_" + host.
        std::tm t{};
        t.tm_year = 2026 - 1900;
        t.tm_mon = 11;
        t.tm_mday = 4;
        t.tm_hour = 21;
        t.tm_min = 5;
        t.tm_sec = 9;
        t.tm_isdst = -1;
        QCOMPARE(tensorboard::logdir_name(std::mktime(&t), "host"), std::string("Dec04_21-05-09_host"));
    }

    // Records in, the Trainer's scalars out: the loss averaged since the last
    // log, every logging_steps steps; the evaluation's; the last log's.
    void writerFromRecords() {
        QTemporaryDir dir;
        RunConfig c;
        c.output_dir = dir.path().toStdString();
        c.logging_steps = 2;
        std::string path;
        {
            tensorboard::EventWriter w(c);
            path = w.path();
            for (int s = 1; s <= 5; ++s) {
                StepRecord r;
                r.step = s;
                r.loss = 1.0 / s;
                r.learning_rate = 0.01 * s;
                r.grad_norm = 2.0 + s;
                r.epoch = s / 5.0;
                r.samples_seen = 16 * s;
                r.elapsed_s = 0.5 * s;
                r.peak_memory_bytes = 1000 * (6 - s);
                r.threads = 3;
                if (s >= 4) { // the noise scale, measured from step 4 on (NaN before: no tag)
                    r.grad_norm_sq_small = 0.5;
                    r.grad_norm_sq_big = 0.25;
                    r.batch_small = 8;
                    r.batch_big = 32;
                    r.noise_scale = 12.5;
                }
                w.on_step(r);
            }
            EvalRecord e;
            e.step = 5;
            e.epoch = 1.0;
            e.eval_loss = 0.25;
            e.eval_accuracy = 0.5;
            e.eval_f1 = 0.4;
            e.runtime_s = 0.5;
            e.samples = 100;
            e.batches = 7;
            w.on_eval(e);
            SummaryRecord sum;
            sum.train_runtime_s = 2.5;
            sum.samples_per_second = 32.0;
            w.on_summary(sum);
            QCOMPARE(w.summary_error(), std::string());
        }
        QVERIFY2(QString::fromStdString(path).contains("/runs/"), path.c_str());
        QVERIFY(QFileInfo(QString::fromStdString(path)).fileName().startsWith("events.out.tfevents."));
        const auto events = read_events(path);
        QVERIFY(!events.empty());
        QCOMPARE(events.front().file_version(), std::string("brain.Event:2"));
        auto s = scalars(events);
        using Points = std::vector<std::pair<std::int64_t, float>>;
        QCOMPARE(s["train/loss"], (Points{{2, float((1.0 + 0.5) / 2)}, {4, float((1.0 / 3 + 0.25) / 2)}}));
        QCOMPARE(s["train/learning_rate"], (Points{{2, 0.02f}, {4, 0.04f}}));
        QCOMPARE(s["train/grad_norm"], (Points{{2, 4.0f}, {4, 6.0f}}));
        // Each log's, the evaluation's, the last log's.
        QCOMPARE(s["train/epoch"], (Points{{2, 0.4f}, {4, 0.8f}, {5, 1.0f}, {5, 1.0f}}));
        QCOMPARE(s["eval/loss"], (Points{{5, 0.25f}}));
        QCOMPARE(s["eval/accuracy"], (Points{{5, 0.5f}}));
        QCOMPARE(s["eval/f1"], (Points{{5, 0.4f}}));
        QCOMPARE(s["eval/samples_per_second"], (Points{{5, 200.0f}}));
        QCOMPARE(s["eval/steps_per_second"], (Points{{5, 14.0f}}));
        QCOMPARE(s["train/train_loss"], (Points{{5, float((1.0 + 0.5 + 1.0 / 3 + 0.25 + 0.2) / 5)}}));
        QCOMPARE(s["train/train_steps_per_second"], (Points{{5, 2.0f}}));
        // The highest step peak since the last log; samples over the time since it.
        QCOMPARE(s["accum/peak_memory_bytes"], (Points{{2, 5000.0f}, {4, 3000.0f}}));
        QCOMPARE(s["accum/samples_per_second"], (Points{{2, 32.0f}, {4, 32.0f}}));
        QCOMPARE(s["accum/threads"], (Points{{2, 3.0f}, {4, 3.0f}}));
        QCOMPARE(s["accum/noise_scale"], (Points{{4, 12.5f}}));
        QCOMPARE(s["accum/grad_norm_sq_small"], (Points{{4, 0.5f}}));
        QCOMPARE(s["accum/grad_norm_sq_big"], (Points{{4, 0.25f}}));
        QCOMPARE(s["accum/batch_small"], (Points{{4, 8.0f}}));
        QCOMPARE(s["accum/batch_big"], (Points{{4, 32.0f}}));
    }

    void unknownValueIsRefused() {
        RunConfig c;
        c.report_to = "wandb";
        const auto problems = validate(c);
        QCOMPARE(problems.size(), std::size_t(1));
        QCOMPARE(problems[0].to_string(), std::string("--report-to: unknown value 'wandb' (choose none, tensorboard)"));

        QProcess p;
        p.start(ACCUM_RUN_EXE, {"--dataset", "synthetic-pairs", "--report-to", "wandb"});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 2);
        const QString err = p.readAllStandardError() + p.readAllStandardOutput();
        QVERIFY2(err.contains("--report-to: unknown value 'wandb' (choose none, tensorboard)"), qPrintable(err));
    }

    // accum-run's event file holds, at each logging step, the mean of the step
    // losses metrics.jsonl records since the previous one (float32, as every
    // TensorBoard scalar), and after the run the Trainer's last log.
    void accumRunWritesEvents() {
        QTemporaryDir dir;
        QProcess p;
        p.start(ACCUM_RUN_EXE, {"--mode", "trainer", "--dataset", "synthetic-pairs", "--epochs", "0", "--max-steps", "6",
                                "--batch-size", "16", "--accumulation-steps", "2", "--logging-steps", "2",
                                "--eval-strategy", "no", "--save-strategy", "no", "--threads", "1", "--quiet",
                                "--report-to", "tensorboard", "--output-dir", dir.path()});
        QVERIFY(p.waitForFinished(120000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        const QString file = event_file(dir.path());
        QVERIFY2(!file.isEmpty(), "no single event file under runs/");
        auto s = scalars(read_events(file.toStdString()));
        QVERIFY(s.count("train/loss") == 1 && s.count("train/train_loss") == 1);
        std::vector<double> losses;
        for (const auto& r : testing::read_records(dir.filePath("metrics.jsonl")))
            if (const auto* step = std::get_if<StepRecord>(&r)) losses.push_back(step->loss);
        QCOMPARE(losses.size(), std::size_t(6));
        std::vector<std::pair<std::int64_t, float>> expected;
        for (std::size_t i = 1; i < losses.size(); i += 2)
            expected.emplace_back(std::int64_t(i + 1), float((losses[i - 1] + losses[i]) / 2));
        QCOMPARE(s["train/loss"], expected);
        QCOMPARE(s["train/train_loss"].size(), std::size_t(1));
        QCOMPARE(s["train/train_loss"].front().first, std::int64_t(6));
    }

    // SIGTERM mid-run: every logging step metrics.jsonl has is in the event
    // file, whose records all read back.
    void terminatedRunKeepsItsSteps() {
        QTemporaryDir dir;
        QProcess p;
        p.start(ACCUM_RUN_EXE, {"--dataset", "synthetic-pairs", "--epochs", "1000", "--logging-steps", "1",
                                "--save-strategy", "no", "--threads", "1", "--report-to", "tensorboard",
                                "--output-dir", dir.path()});
        QVERIFY(p.waitForStarted());
        QTRY_VERIFY_WITH_TIMEOUT(QFileInfo(dir.filePath("metrics.jsonl")).size() > 2000, 30000);
        ::kill(static_cast<pid_t>(p.processId()), SIGTERM);
        QVERIFY(p.waitForFinished(10000));
        QCOMPARE(p.exitCode(), 130);
        std::vector<std::int64_t> steps;
        for (const auto& r : testing::read_records(dir.filePath("metrics.jsonl")))
            if (const auto* step = std::get_if<StepRecord>(&r)) steps.push_back(step->step);
        QVERIFY(!steps.empty());
        const QString file = event_file(dir.path());
        QVERIFY2(!file.isEmpty(), "no single event file under runs/");
        auto s = scalars(read_events(file.toStdString()));
        QVERIFY(s.count("train/loss") == 1);
        std::vector<std::int64_t> logged;
        for (const auto& [step, value] : s["train/loss"]) logged.push_back(step);
        QCOMPARE(logged, steps);
        QVERIFY(s.find("train/train_loss") == s.end()); // the Trainer's last log is a completed run's
    }
};

QTEST_GUILESS_MAIN(TestTensorBoard)
#include "test_tensorboard.moc"

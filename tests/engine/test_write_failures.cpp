// A write of the run that fails — a full disk, an I/O error,
// a file system made read-only, a directory that vanished — ends accum-run with
// exit 7 and a message naming the file and the reason; no temporary checkpoint
// directory is left, the earlier checkpoints stay complete, and resuming from
// the latest one gives the losses of an uninterrupted run (1e-5): in each style
// and with two processes.
//
// The full disk and the read-only file system are real: a tmpfs mounted here
// (root only; without root, or where mounting is refused, those tests say why
// they skip), sized from a first checkpoint measured in the same test, and
// always unmounted. The I/O error is the kernel's too: a write to
// /proc/self/mem at offset 0 fails with EIO. Every process a test starts is
// waited for or killed.
#include <QtTest/QtTest>

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "accum/errors.h"
#include "accum/metrics_io.h"
#include "capture.h"
#include "checked_file.h"
#include "processes.h"
#include "wait_until.h"

using namespace accum;

namespace {

using Result = testing::CliResult;
Result run_cli(const QStringList& args, int timeout_ms = 120000) { return testing::run_cli(args, timeout_ms); }

using testing::read_records;
using testing::read_steps;

// What a directory takes on a tmpfs: each file in whole 4 KiB pages.
qint64 pages_of(const QString& dir) {
    qint64 total = 0;
    QDirIterator it(dir, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
    while (it.hasNext()) total += (QFileInfo(it.next()).size() + 4095) / 4096 * 4096;
    return total;
}

bool copy_tree(const QString& from, const QString& to) {
    if (!QDir().mkpath(to)) return false;
    for (const auto& e : QDir(from).entryInfoList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden)) {
        const QString target = to + "/" + e.fileName();
        if (e.isDir() ? !copy_tree(e.filePath(), target) : !QFile::copy(e.filePath(), target)) return false;
    }
    return true;
}

// Hidden temporary checkpoint directories (.checkpoint-N.tmp) left in `dir`.
QStringList temporary_checkpoints(const QString& dir) {
    return QDir(dir).entryList({".checkpoint-*"}, QDir::Dirs | QDir::Hidden | QDir::NoDotAndDotDot);
}

bool complete_checkpoint(const QString& dir) {
    for (const char* f : {"model.safetensors", "optimizer.pt", "scheduler.pt", "rng_state.pt", "trainer_state.json",
                          "accum_state.json"})
        if (!QFile::exists(dir + "/" + f)) return false;
    return true;
}

// A tmpfs of `bytes` mounted on a new temporary directory for the scope;
// unmounted (lazily, should a process still hold it) and removed on exit.
class Tmpfs {
public:
    explicit Tmpfs(qint64 bytes) {
        if (::geteuid() != 0) {
            why_not_ = "not root: mounting a tmpfs needs root (CI runs the suite as root)";
            return;
        }
        if (!dir_.isValid()) {
            why_not_ = "no temporary directory for the mount point";
            return;
        }
        options_ = QStringLiteral("size=%1k,mode=0755").arg((bytes + 1023) / 1024).toStdString();
        if (::mount("tmpfs", dir_.path().toLocal8Bit().constData(), "tmpfs", 0, options_.c_str()) != 0) {
            why_not_ = std::string("mount -t tmpfs failed: ") + std::strerror(errno);
            return;
        }
        mounted_ = true;
    }
    ~Tmpfs() {
        if (mounted_) ::umount2(dir_.path().toLocal8Bit().constData(), MNT_DETACH);
    }
    Tmpfs(const Tmpfs&) = delete;
    Tmpfs& operator=(const Tmpfs&) = delete;

    bool mounted() const { return mounted_; }
    const std::string& why_not() const { return why_not_; }
    QString path() const { return dir_.path(); }
    // The kernel refuses (EBUSY) while a file is open for writing: retried for
    // up to `patience` (the run opens its files for a record at a time).
    bool remount(bool read_only, int patience_ms = 10000) {
        const unsigned long flags = MS_REMOUNT | (read_only ? MS_RDONLY : 0);
        bool done = false, busy = true;
        testing::wait_until(
            [&] {
                done = ::mount("tmpfs", dir_.path().toLocal8Bit().constData(), "tmpfs", flags, options_.c_str()) == 0;
                busy = !done && errno == EBUSY;
                return !busy; // mounted, or refused for another reason: no use trying again
            },
            std::chrono::milliseconds(patience_ms));
        return done;
    }

private:
    QTemporaryDir dir_;
    std::string options_;
    std::string why_not_;
    bool mounted_ = false;
};

// A run of 15 updates that saves every 5, with dropout (the RNG state must
// resume too): one process × 32 × 4, or two × 16 × 4.
QStringList run_args(const QString& mode, bool two_processes, int steps = 15) {
    QStringList args{"--mode", mode, "--dataset", "synthetic-pairs", "--model", "mlp", "--batch-size",
                     two_processes ? "16" : "32", "--accumulation-steps", "4", "--max-steps", QString::number(steps),
                     "--save-strategy", "steps", "--save-steps", "5", "--eval-strategy", "no", "--dropout", "0.1",
                     "--seed", "3", "--threads", "1", "--quiet"};
    if (two_processes) args << "--nproc-per-node" << "2" << "--master-port" << "0" << "--dist-timeout" << "20";
    return args;
}

void add_style_rows() {
    QTest::addColumn<QString>("mode");
    QTest::addColumn<bool>("two");
    for (const char* mode : {"pytorch", "accelerator", "trainer"}) QTest::addRow("%s", mode) << mode << false;
    QTest::addRow("pytorch, 2 processes") << "pytorch" << true;
}

// After a write failure: the run's directory holds no temporary checkpoint,
// its latest complete checkpoint resumes (from a copy, off the broken file
// system) to the losses of the uninterrupted run.
void verify_resumes(const QString& failed_dir, const QStringList& args, const std::vector<StepRecord>& reference,
                    const QString& resumed_dir) {
    QVERIFY2(copy_tree(failed_dir, resumed_dir), qPrintable(failed_dir));
    const auto r = run_cli(args + QStringList{"--output-dir", resumed_dir, "--resume", resumed_dir});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    const auto steps = read_steps(resumed_dir + "/metrics.jsonl");
    const auto same = testing::compare_losses(reference, steps);
    const QString counts = QStringLiteral(" (%1 steps, reference %2)").arg(steps.size()).arg(reference.size());
    QVERIFY2(same.within(1e-5), qPrintable(QString::fromStdString(same.what()) + counts));
}

} // namespace

class TestWriteFailures : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // The helper every writer uses: the kernel's errors become WriteError with
    // the file, the reason and what was being done.
    void checkedWritesNameTheFileAndTheReason() {
        auto expect = [](auto&& write, const char* errno_name, const QString& text) {
            try {
                write();
            } catch (const WriteError& e) {
                QCOMPARE(QString::fromStdString(e.detail().code), QString(message_code::write_failed));
                QCOMPARE(QString::fromStdString(e.detail().args.at("errno")), QString(errno_name));
                QCOMPARE(QString::fromUtf8(e.what()), text);
                return;
            }
            QFAIL(qPrintable("no WriteError for " + text));
        };
        expect([] { io::write_file("/dev/full", "x"); }, "ENOSPC", "no space left on device while writing /dev/full");
        expect([] { io::append_to_file("/dev/full", "x\n"); }, "ENOSPC",
               "no space left on device while writing /dev/full");
        // Address 0 of this process is not mapped: the kernel answers EIO.
        expect([] { io::write_file("/proc/self/mem", "x"); }, "EIO", "input/output error while writing /proc/self/mem");
        QTemporaryDir dir;
        const QString gone = dir.filePath("gone");
        expect([&] { io::write_file((gone + "/model.pt").toStdString(), "x", "shown/model.pt"); }, "ENOENT",
               "no such file or directory while creating shown/model.pt");
        expect([&] { io::create_directory((gone + "/a/b").toStdString()); }, "ENOENT",
               "no such file or directory while creating " + gone + "/a/b");
        // An atomic write that fails leaves the old file and no temporary one.
        const QString kept = dir.filePath("kept.json");
        io::write_file_atomically(kept.toStdString(), "old");
        QVERIFY(::chmod(dir.path().toLocal8Bit().constData(), 0555) == 0);
        bool refused = false;
        try {
            io::write_file_atomically(kept.toStdString(), "new");
        } catch (const WriteError&) {
            refused = true;
        }
        ::chmod(dir.path().toLocal8Bit().constData(), 0755);
        if (::geteuid() != 0) { // root writes into a read-only mode directory all the same
            QVERIFY(refused);
            QVERIFY(!QFile::exists(kept + ".tmp"));
        }
        QFile f(kept);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), refused ? QByteArray("old") : QByteArray("new"));
    }

    // The disk errors every machine can produce: ENOSPC from /dev/full and EIO
    // from /proc/self/mem as the metrics file end exit 7 naming it; the summary
    // says the same and accum-run says the summary could not go there either.
    void metricsFileThatCannotBeWritten_data() {
        QTest::addColumn<QString>("metrics");
        QTest::addColumn<QString>("reason");
        QTest::newRow("ENOSPC") << "/dev/full" << "no space left on device";
        QTest::newRow("EIO") << "/proc/self/mem" << "input/output error";
    }
    void metricsFileThatCannotBeWritten() {
        QFETCH(QString, metrics);
        QFETCH(QString, reason);
        QTemporaryDir dir;
        const auto r = run_cli(run_args("pytorch", false, 3) + QStringList{"--metrics", metrics, "--output-dir", dir.path()});
        QCOMPARE(r.exit_code, 7);
        QVERIFY2(r.err.contains(reason + " while writing " + metrics), qPrintable(r.err));
        QVERIFY2(r.err.contains("the summary could not be written"), qPrintable(r.err));
        QVERIFY2(!r.err.contains("terminate called") && !r.err.contains("c10::Error"), qPrintable(r.err));
        QVERIFY(QFile::exists(dir.filePath("accum_config.json")));
        QVERIFY(temporary_checkpoints(dir.path()).isEmpty());
        // summary.json lives in the output directory, which has room.
        QFile summary(dir.filePath("summary.json"));
        QVERIFY(summary.open(QIODevice::ReadOnly));
        const auto json = QJsonDocument::fromJson(summary.readAll()).object();
        QCOMPARE(json["exit_code"].toInt(), 7);
        QCOMPARE(json["message_code"].toString(), QStringLiteral("write_failed"));
    }

    // The report: a file system that holds the first checkpoint but not
    // the second (--save-steps 5). Exit 7, "no space left on device while
    // writing …/checkpoint-10/…", no .checkpoint-10.tmp, checkpoint-5 complete,
    // every line of metrics.jsonl valid with the summary last (written once the
    // temporary directory's space was given back), and checkpoint-5 resumes to
    // the uninterrupted run's losses.
    void fullDiskDuringCheckpoint_data() { add_style_rows(); }
    void fullDiskDuringCheckpoint() {
        QFETCH(QString, mode);
        QFETCH(bool, two);
        const QStringList args = run_args(mode, two);
        QTemporaryDir work;
        const QString reference_dir = work.filePath("reference");
        const auto ref = run_cli(args + QStringList{"--output-dir", reference_dir});
        QVERIFY2(ref.exit_code == 0, qPrintable(ref.err));
        const auto reference = read_steps(reference_dir + "/metrics.jsonl");
        QCOMPARE(reference.size(), std::size_t(15));
        const auto finite = testing::compare_losses(reference, reference); // every loss finite
        QVERIFY2(finite.compared(), finite.what().c_str());

        // Room for the run's files and one checkpoint and a half.
        const qint64 checkpoint = pages_of(reference_dir + "/checkpoint-5");
        const qint64 files = pages_of(reference_dir) - pages_of(reference_dir + "/checkpoint-5") -
                             pages_of(reference_dir + "/checkpoint-10") - pages_of(reference_dir + "/checkpoint-15");
        QVERIFY(checkpoint > 100000 && files > 0);
        Tmpfs disk(files + checkpoint + checkpoint / 2);
        if (!disk.mounted()) QSKIP(disk.why_not().c_str());
        const QString run_dir = disk.path() + "/run";

        const auto r = run_cli(args + QStringList{"--output-dir", run_dir});
        QCOMPARE(r.exit_code, 7);
        QVERIFY2(r.err.contains("no space left on device while writing " + run_dir + "/checkpoint-10/"), qPrintable(r.err));
        QVERIFY2(!r.err.contains("terminate called") && !r.err.contains("c10::Error"), qPrintable(r.err));
        QVERIFY2(temporary_checkpoints(run_dir).isEmpty(), qPrintable(temporary_checkpoints(run_dir).join(' ')));
        QVERIFY(complete_checkpoint(run_dir + "/checkpoint-5"));
        QVERIFY(!QFileInfo::exists(run_dir + "/checkpoint-10"));
        const auto records = read_records(run_dir + "/metrics.jsonl"); // every line parses
        QVERIFY(!records.empty());
        const auto* summary = std::get_if<SummaryRecord>(&records.back());
        QVERIFY2(summary, "the summary is not the last record");
        QCOMPARE(summary->exit_code, 7);
        QCOMPARE(summary->status, RunStatus::Error);
        QCOMPARE(QString::fromStdString(summary->detail.args.at("errno")), QStringLiteral("ENOSPC"));
        QVERIFY(QFile::exists(run_dir + "/summary.json"));
        if (two) { // rank 1 stopped at its next sync naming rank 0's failure; the launcher reports rank 0's code
            QVERIFY2(r.err.contains("rank 1: rank 0 failed (all-reduce given up): no space left on device"),
                     qPrintable(r.err));
            QVERIFY2(r.err.contains("rank 0 (pid") && r.err.contains("exited with code 7"), qPrintable(r.err));
        }

        verify_resumes(run_dir, args, reference, work.filePath("resumed"));
    }

    // A file system made read-only while the run writes (a disk that turns
    // read-only on errors does this): exit 7 at the next record, naming
    // metrics.jsonl and the reason, the summary said on stderr as it cannot be
    // written; the latest checkpoint resumes to the uninterrupted run's losses.
    void readOnlyMidRun_data() { add_style_rows(); }
    void readOnlyMidRun() {
        QFETCH(QString, mode);
        QFETCH(bool, two);
        const QStringList args = run_args(mode, two, 40);
        QTemporaryDir work;
        const QString reference_dir = work.filePath("reference");
        const auto ref = run_cli(args + QStringList{"--output-dir", reference_dir});
        QVERIFY2(ref.exit_code == 0, qPrintable(ref.err));
        const auto reference = read_steps(reference_dir + "/metrics.jsonl");
        QCOMPARE(reference.size(), std::size_t(40));

        Tmpfs disk(64 << 20);
        if (!disk.mounted()) QSKIP(disk.why_not().c_str());
        const QString run_dir = disk.path() + "/run";
        QProcess p;
        // Teaching pace (20 ms a micro-batch): the file system turns read-only mid-run.
        p.start(ACCUM_RUN_EXE, args + QStringList{"--micro-step-delay", "0.02", "--output-dir", run_dir});
        QVERIFY(p.waitForStarted());
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(run_dir + "/checkpoint-5/trainer_state.json") ||
                                     p.state() == QProcess::NotRunning,
                                 30000);
        const bool read_only = disk.remount(true);
        const bool ended = p.waitForFinished(20000);
        if (!ended) {
            p.kill();
            p.waitForFinished();
        }
        const auto err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(read_only, "the tmpfs could not be made read-only");
        QVERIFY2(ended, "the run did not end after its file system turned read-only");
        QCOMPARE(p.exitCode(), 7);
        QVERIFY2(err.contains("read-only file system while ") && err.contains(run_dir + "/"), qPrintable(err));
        QVERIFY2(err.contains("the summary could not be written: read-only file system"), qPrintable(err));
        QVERIFY2(!err.contains("terminate called"), qPrintable(err));
        QVERIFY(disk.remount(false));
        QVERIFY2(temporary_checkpoints(run_dir).isEmpty(), qPrintable(temporary_checkpoints(run_dir).join(' ')));
        QVERIFY(complete_checkpoint(run_dir + "/checkpoint-5"));
        const auto steps = read_steps(run_dir + "/metrics.jsonl"); // every line parses
        QVERIFY2(steps.size() < 40, "the run finished before its file system turned read-only");

        verify_resumes(run_dir, args, reference, work.filePath("resumed"));
    }

    // The output directory vanishes mid-run (moved away, a disk unmounted): exit
    // 7 at the next record, "no such file or directory while writing
    // …/metrics.jsonl"; the checkpoints it had resume. No root needed.
    void vanishedDirectoryMidRun_data() {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<bool>("two");
        QTest::addRow("trainer") << "trainer" << false;
        QTest::addRow("accelerator, 2 processes") << "accelerator" << true;
    }
    void vanishedDirectoryMidRun() {
        QFETCH(QString, mode);
        QFETCH(bool, two);
        const QStringList args = run_args(mode, two, 40);
        QTemporaryDir work;
        const QString reference_dir = work.filePath("reference");
        const auto ref = run_cli(args + QStringList{"--output-dir", reference_dir});
        QVERIFY2(ref.exit_code == 0, qPrintable(ref.err));
        const auto reference = read_steps(reference_dir + "/metrics.jsonl");
        QCOMPARE(reference.size(), std::size_t(40));

        const QString run_dir = work.filePath("run"), moved = work.filePath("moved");
        QProcess p;
        p.start(ACCUM_RUN_EXE, args + QStringList{"--micro-step-delay", "0.02", "--output-dir", run_dir});
        QVERIFY(p.waitForStarted());
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(run_dir + "/checkpoint-5/trainer_state.json") ||
                                     p.state() == QProcess::NotRunning,
                                 30000);
        const bool renamed = QDir().rename(run_dir, moved);
        const bool ended = p.waitForFinished(20000);
        if (!ended) {
            p.kill();
            p.waitForFinished();
        }
        const auto err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY(renamed);
        QVERIFY2(ended, "the run did not end after its directory vanished");
        QCOMPARE(p.exitCode(), 7);
        QVERIFY2(err.contains("no such file or directory while ") && err.contains(run_dir + "/"), qPrintable(err));
        QVERIFY2(temporary_checkpoints(moved).isEmpty(), qPrintable(temporary_checkpoints(moved).join(' ')));
        QVERIFY(!QFileInfo::exists(run_dir)); // nothing was made again where the directory was
        QVERIFY(complete_checkpoint(moved + "/checkpoint-5"));
        verify_resumes(moved, args, reference, work.filePath("resumed"));
    }
};

QTEST_GUILESS_MAIN(TestWriteFailures)
#include "test_write_failures.moc"
// SPDX-License-Identifier: GPL-3.0-or-later

// SPDX-License-Identifier: GPL-3.0-or-later
// accum-run's progress bar: on a terminal (a pseudo-terminal here, forkpty)
// one line redrawn in place with the step, the epoch, the loss, samples/s and
// the time spent and left; with a pipe, the log's lines as before.
#include <QtTest/QtTest>

#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "processes.h"
#include "runner/progress_bar.h"

using namespace accum;

namespace {

struct TerminalRun {
    int exit_code = -1; // -1: killed at the timeout, or not started
    std::string output; // everything written to the terminal
};

// accum-run under a pseudo-terminal of 100 columns, read until it closes or
// `timeout` passes (then the child is killed and the result says so).
TerminalRun run_on_terminal(const std::vector<std::string>& args, std::chrono::seconds timeout) {
    TerminalRun result;
    winsize size{};
    size.ws_row = 24;
    size.ws_col = 100;
    int master = -1;
    const pid_t pid = forkpty(&master, nullptr, nullptr, &size);
    if (pid < 0) return result;
    if (pid == 0) {
        std::vector<char*> argv;
        std::string program = ACCUM_RUN_EXE;
        argv.push_back(program.data());
        std::vector<std::string> copies = args;
        for (auto& a : copies) argv.push_back(a.data());
        argv.push_back(nullptr);
        execv(program.c_str(), argv.data());
        _exit(127);
    }
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    bool killed = false;
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            kill(pid, SIGKILL);
            killed = true;
            break;
        }
        pollfd p{master, POLLIN, 0};
        if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
        char buffer[4096];
        const ssize_t n = read(master, buffer, sizeof buffer);
        if (n <= 0) break; // EIO: the child's side is closed
        result.output.append(buffer, static_cast<std::size_t>(n));
    }
    int status = 0;
    waitpid(pid, &status, 0);
    close(master);
    if (!killed && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
    return result;
}

const std::vector<std::string> kShortRun{"--dataset", "synthetic-pairs", "--batch-size", "32", "--accumulation-steps",
                                         "2", "--max-steps", "40", "--logging-steps", "10", "--eval-strategy", "steps",
                                         "--eval-steps", "20", "--save-strategy", "no"};

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
    args.insert(args.end(), more.begin(), more.end());
    return args;
}

} // namespace

class TestProgressBar : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void formats() {
        QCOMPARE(cli::format_interval(0), std::string("00:00"));
        QCOMPARE(cli::format_interval(307.9), std::string("05:07"));
        QCOMPARE(cli::format_interval(3723), std::string("1:02:03"));
        StepRecord r;
        r.step = 10;
        r.epoch = 0.5;
        r.loss = 0.6931;
        r.samples_seen = 640;
        r.elapsed_s = 4.0; // 640 / 4 = 160 samples/s; 0.4 s a step, 30 steps left = 12 s
        const auto line = cli::progress_line(r, 40, 200);
        QCOMPARE(line, std::string("step 10/40 25%|##        | [00:04<00:12, 160.0 samples/s] epoch 0.50 loss 0.6931"));
        // Never wider than the terminal less one column.
        QCOMPARE(cli::progress_line(r, 40, 30).size(), std::size_t(29));
        // Total not known: no share, no time left.
        QVERIFY(cli::progress_line(r, 0, 200).find("[00:04<?, ") != std::string::npos);
    }

    void redrawnOnATerminal() {
        QTemporaryDir dir;
        const auto r = run_on_terminal(with(kShortRun, {"--output-dir", dir.filePath("run").toStdString()}),
                                       std::chrono::seconds(240));
        QVERIFY2(r.exit_code == 0, r.output.c_str());
        const std::string clear = "\r\033[K";
        QVERIFY2(r.output.find(clear + "step 1/40 ") != std::string::npos, r.output.c_str());
        // The last state stays, then the summary below it (the terminal turns \n into \r\n).
        const auto last = r.output.rfind(clear + "step 40/40 100%|##########| [");
        QVERIFY2(last != std::string::npos, r.output.c_str());
        const auto end_of_bar = r.output.find('\n', last);
        QVERIFY(end_of_bar != std::string::npos);
        const std::string bar = r.output.substr(last + clear.size(), end_of_bar - last - clear.size());
        QVERIFY2(bar.find("<00:00, ") != std::string::npos && bar.find(" samples/s] epoch ") != std::string::npos &&
                     bar.find(" loss ") != std::string::npos,
                 bar.c_str());
        QVERIFY2(bar.find("loss nan") == std::string::npos, bar.c_str());
        QVERIFY(r.output.find("summary: completed", end_of_bar) != std::string::npos);
        // The log's lines (steps and evaluations) are printed above the bar: the
        // bar is cleared, the line written, the bar drawn again.
        QVERIFY2(r.output.find(clear + "[pytorch] step 20/40  epoch") != std::string::npos, r.output.c_str());
        QVERIFY2(r.output.find(clear + "[pytorch] eval  epoch") != std::string::npos, r.output.c_str());
    }

    void offWithDisableTqdmOrQuiet() {
        for (const std::string flag : {"--disable-tqdm", "--quiet"}) {
            QTemporaryDir dir;
            const auto r = run_on_terminal(with(kShortRun, {flag, "--output-dir", dir.filePath("run").toStdString()}),
                                           std::chrono::seconds(240));
            QVERIFY2(r.exit_code == 0, r.output.c_str());
            QVERIFY2(r.output.find("\033[K") == std::string::npos, r.output.c_str());
            QVERIFY(r.output.find("summary: completed") != std::string::npos);
        }
    }

    // A pipe: today's lines, no \r anywhere.
    void pipedOutputKeepsItsLines() {
        QTemporaryDir dir;
        QStringList args;
        for (const auto& a : kShortRun) args << QString::fromStdString(a);
        const auto r = testing::run_cli(args + QStringList{"--output-dir", dir.filePath("run")});
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        QVERIFY(!r.out.contains('\r'));
        QVERIFY(!r.out.contains("\033["));
        QVERIFY2(r.out.contains("step 40/40"), qPrintable(r.out));
        QVERIFY(r.out.contains("summary: completed"));
        for (const auto& line : r.out.split('\n', Qt::SkipEmptyParts))
            QVERIFY2(!line.contains("samples/s]"), qPrintable(line));
    }
};

QTEST_GUILESS_MAIN(TestProgressBar)
#include "test_progress_bar.moc"

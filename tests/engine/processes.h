#pragma once
// Child processes in the engine tests: accum-run run to its end, and the
// processes a launcher started.

#include <sys/types.h>

#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

namespace accum::testing {

struct CliResult {
    int exit_code = -1; // -1 when it crashed or was killed at the timeout
    QString out, err;
    double seconds = 0; // from start to end (run_program and run_cli)
};

// Waits for a started process, killing it when it outlasts `timeout_ms`.
inline CliResult finish(QProcess& p, int timeout_ms) {
    if (!p.waitForFinished(timeout_ms)) {
        p.kill();
        p.waitForFinished();
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

// `program` with `args` and, when given, extra environment ("NAME=value").
inline CliResult run_program(const QString& program, const QStringList& args, int timeout_ms = 240000,
                             const QStringList& env = {}) {
    QProcess p;
    if (!env.isEmpty()) {
        auto e = QProcessEnvironment::systemEnvironment();
        for (const auto& kv : env) e.insert(kv.section('=', 0, 0), kv.section('=', 1));
        p.setProcessEnvironment(e);
    }
    const auto start = std::chrono::steady_clock::now();
    p.start(program, args);
    auto result = finish(p, timeout_ms);
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
}

// accum-run (ACCUM_RUN_EXE) run to its end.
inline CliResult run_cli(const QStringList& args, int timeout_ms = 240000, const QStringList& env = {}) {
    return run_program(ACCUM_RUN_EXE, args, timeout_ms, env);
}

// The live processes whose parent is `parent` (a launcher's ranks, torchrun's workers).
inline std::vector<pid_t> children_of(pid_t parent) {
    std::vector<pid_t> out;
    for (const auto& e : std::filesystem::directory_iterator("/proc")) {
        const auto name = e.path().filename().string();
        if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
        std::ifstream f(e.path() / "stat");
        std::string stat;
        std::getline(f, stat);
        const auto close = stat.rfind(')');
        if (close == std::string::npos) continue;
        std::istringstream rest(stat.substr(close + 2));
        char state;
        pid_t ppid = 0;
        rest >> state >> ppid;
        if (ppid == parent && state != 'Z') out.push_back(static_cast<pid_t>(std::stoi(name)));
    }
    return out;
}

// A process's state letter from /proc (R, S, T when stopped, Z); '?' when it is gone.
inline char process_state(pid_t pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string stat;
    std::getline(f, stat);
    const auto close = stat.rfind(')');
    if (close == std::string::npos || close + 2 >= stat.size()) return '?';
    return stat[close + 2];
}

} // namespace accum::testing
// SPDX-License-Identifier: GPL-3.0-or-later

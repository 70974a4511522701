#pragma once
// Exceptions the engine throws for failures that are the input's fault.

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

#include "accum/engine_messages.h"

namespace accum {

// An error whose message is also a code with arguments (engine_messages.h):
// what() is its English text. Built from plain text, the code is `fallback`
// with the text as its argument `detail`.
class CodedError : public std::runtime_error {
public:
    explicit CodedError(EngineMessage detail) : std::runtime_error(english_text(detail)), detail_(std::move(detail)) {}
    CodedError(const char* fallback, const std::string& text)
        : std::runtime_error(text), detail_{fallback, {{"detail", text}}} {}
    const EngineMessage& detail() const { return detail_; }
    // More than the message holds, for the run's log (a TorchScript module's
    // traceback: where in its code it failed). Empty for most errors.
    const std::string& log_text() const { return log_text_; }
    void set_log_text(std::string text) { log_text_ = std::move(text); }

private:
    EngineMessage detail_;
    std::string log_text_;
};

// Data missing, unreadable or corrupt. The message names the file (and the line for CSV).
class DataError : public CodedError {
public:
    explicit DataError(const std::string& message) : CodedError(message_code::data_error, message) {}
    explicit DataError(EngineMessage detail) : CodedError(std::move(detail)) {}
};

// "PATH: PROBLEM": a data file that is there but cannot be used as it is.
inline DataError corrupt_data(const std::string& path, const std::string& problem) {
    return DataError(make_message(message_code::data_corrupt, {{"path", path}, {"problem", problem}}));
}

// "PATH:LINE: PROBLEM": a line of a text file that cannot be used.
inline DataError bad_data_line(const std::string& path, std::int64_t line, const std::string& problem) {
    return DataError(
        make_message(message_code::data_bad_line, {{"path", path}, {"line", std::to_string(line)}, {"problem", problem}}));
}

// A configuration that cannot run (the message names the option).
class ConfigError : public CodedError {
public:
    explicit ConfigError(const std::string& message) : CodedError(message_code::config_error, message) {}
    explicit ConfigError(EngineMessage detail) : CodedError(std::move(detail)) {}
};

// A window's loss or gradient became non-finite (the run stops as diverged). The
// summary's message is its detail with the last good checkpoint added.
class DivergedError : public CodedError {
public:
    explicit DivergedError(const std::string& message) : CodedError(message_code::diverged_detail, message) {}
    explicit DivergedError(EngineMessage detail) : CodedError(std::move(detail)) {}
};

// A file of the run could not be written (accum-run exits with 7): the disk is
// full, an I/O error, the directory is read-only or gone. The message names the
// file and the reason: "no space left on device while writing OUT/checkpoint-10/model.pt".
// `action`: writing, creating, renaming, syncing or removing; `to`: a rename's target.
class WriteError : public CodedError {
public:
    WriteError(const std::string& path, int error_number, const std::string& reason, const char* errno_name,
               const char* action = "writing", const std::string& to = {})
        : CodedError(make_message(message_code::write_failed, arguments(path, reason, errno_name, action, to))),
          path_(path), error_number_(error_number) {}
    const std::string& path() const { return path_; }
    int error_number() const { return error_number_; }

private:
    static std::map<std::string, std::string> arguments(const std::string& path, const std::string& reason,
                                                        const char* errno_name, const char* action,
                                                        const std::string& to) {
        std::map<std::string, std::string> args{{"path", path}, {"reason", reason}, {"action", action}};
        if (errno_name && *errno_name) args["errno"] = errno_name;
        if (!to.empty()) args["to"] = to;
        return args;
    }
    std::string path_;
    int error_number_;
};

// A failure of the data-parallel process group (accum-run exits with 6): a peer
// lost, a rendezvous or a collective past its timeout, the master's port taken,
// a master that cannot be reached. `rank()` is the rank that saw the failure;
// `peer()` the rank at fault when it is known, -1 when not.
class DistributedError : public std::runtime_error {
public:
    enum class Kind {
        PeerLost,     // a peer's connection closed: it died or left
        Timeout,      // a rendezvous or a collective did not complete in time
        AddressInUse, // the master could not listen on its port
        Unreachable,  // the master did not accept or did not answer
        PeerFailed,   // a peer failed and said why (its message is quoted)
        Failed,       // any other error of the backend, or an earlier failure
    };
    DistributedError(Kind kind, int rank, int peer, const std::string& message)
        : std::runtime_error(message), kind_(kind), rank_(rank), peer_(peer) {}
    Kind kind() const { return kind_; }
    int rank() const { return rank_; }
    int peer() const { return peer_; }

private:
    Kind kind_;
    int rank_;
    int peer_;
};

// The text of an exception as a person reads it: LibTorch's message without
// its C++ backtrace (c10::Error::what_without_backtrace()), and any text that
// embeds one cut before it ("Exception raised from …", "frame #N: …" lines).
// Every torch exception that reaches stderr, the studio or the metrics goes
// through it; the whole what() belongs in the run's log only.
std::string error_text(const std::exception& e);
std::string without_backtrace(const std::string& text);

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later

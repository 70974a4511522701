#pragma once
// Every byte a run writes goes through here: plain POSIX calls (open, write,
// fsync, close, rename, mkdir), each checked, so that a full disk, an I/O
// error, a read-only or vanished directory ends the run with a WriteError
// (accum/errors.h) naming the file and the reason — never with an exception
// from a destructor, which would end the process. Small files are handed over
// as bytes; large ones (a checkpoint's tensors) are streamed piece by piece
// through a FileWriter, from the memory that holds them, with no buffer of its
// own. Torch-free; POSIX (Linux).
//
// `shown` is the path the message names when it is not the one written: a
// checkpoint is written into .checkpoint-N.tmp/ and renamed, and the person
// reading the message knows it as checkpoint-N/.

#include <cstdint>
#include <functional>
#include <streambuf>
#include <string>
#include <string_view>

namespace accum::io {

// "no space left on device", "read-only file system", … (strerror, lower case).
std::string reason_text(int error_number);
// "ENOSPC", "EIO", "EROFS", … for the errors a write meets; "" for others.
const char* errno_name(int error_number);

// Writes `bytes` as the whole of `path` (created or truncated), synced to the
// disk before it returns. Throws WriteError.
void write_file(const std::string& path, std::string_view bytes, const std::string& shown = {});

// A file written piece by piece: created (or truncated) at construction, each
// write(2) checked, synced and closed by finish(). No buffer: each piece goes
// to the kernel from the caller's memory. Destroyed unfinished, it closes the
// file quietly (the caller removes the half-written file or its directory).
class FileWriter {
public:
    // Throws WriteError naming `shown` (default `path`).
    FileWriter(const std::string& path, const std::string& shown = {});
    ~FileWriter();
    FileWriter(const FileWriter&) = delete;
    FileWriter& operator=(const FileWriter&) = delete;
    // Throws WriteError.
    void write(std::string_view bytes);
    // For a writer that must never see a failure (LibTorch's zip writer throws
    // from its destructor, which ends the process): the first failure is kept
    // and later pieces are dropped; `size` is always returned. finish() throws it.
    std::size_t write_or_keep_failure(const void* data, std::size_t size) noexcept;
    // The failure kept, synced, closed. Throws WriteError.
    void finish();
    std::uint64_t bytes_written() const { return written_; }

private:
    std::string shown_;
    int fd_ = -1;
    int failure_ = 0; // errno of the first failed write, kept
    std::uint64_t written_ = 0;
};

// A std::streambuf over a FileWriter for a writer that takes a std::ostream
// (torch::jit::Module::save): unbuffered, every piece goes on to
// write_or_keep_failure, so the stream never fails and the failure waits for finish().
class FileWriterBuf : public std::streambuf {
public:
    explicit FileWriterBuf(FileWriter& file) : file_(file) {}

protected:
    std::streamsize xsputn(const char* data, std::streamsize n) override;
    int_type overflow(int_type c) override;

private:
    FileWriter& file_;
};

// `path` becomes the whole new `bytes` or stays as it was: written to
// path.tmp, synced, renamed over it, the directory synced. A failure removes
// path.tmp. Throws WriteError.
void write_file_atomically(const std::string& path, std::string_view bytes);

// The same for a file written by `write(tmp, shown)` (a FileWriter's path and
// the name its messages show): path.tmp, renamed over `path` once `write`
// returns. Throws WriteError (a failure removes path.tmp).
void write_file_atomically(const std::string& path,
                           const std::function<void(const std::string& tmp, const std::string& shown)>& write);

// Appends `bytes` to `path` (created when missing; emptied first when
// `truncate`): opened, written and closed on every call, so each call is one
// complete append and a vanished directory or a file system made read-only is
// seen at the next record. Not synced (sync_file for that). Throws WriteError.
void append_to_file(const std::string& path, std::string_view bytes, bool truncate = false);

// fsync of a file or a directory (a directory: the names in it). Throws WriteError.
void sync_file(const std::string& path, const std::string& shown = {});
void sync_directory(const std::string& path, const std::string& shown = {});

// mkdir (the parent must exist); an existing directory is an error. Throws WriteError.
void create_directory(const std::string& path, const std::string& shown = {});
// rename(2). Throws WriteError naming `shown_from` (default `from`) and `to`.
void rename_path(const std::string& from, const std::string& to, const std::string& shown_from = {});
// Removes a file or a directory tree; a missing one is no error. Throws WriteError.
void remove_tree(const std::string& path, const std::string& shown = {});
// The same, without throwing: true when nothing is left.
bool remove_tree_quietly(const std::string& path) noexcept;

} // namespace accum::io
// SPDX-License-Identifier: GPL-3.0-or-later

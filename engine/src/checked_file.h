#pragma once
// Every byte a run writes goes through here: plain POSIX calls (open, write,
// fsync, close, rename, mkdir), each checked, so that a full disk, an I/O
// error, a read-only or vanished directory ends the run with a WriteError
// (accum/errors.h) naming the file and the reason — never with an exception
// from a destructor, which would end the process. Callers serialise what they
// write into memory first (LibTorch's archives into a std::string, JSON into
// text) and hand the bytes over. Torch-free; POSIX (Linux).
//
// `shown` is the path the message names when it is not the one written: a
// checkpoint is written into .checkpoint-N.tmp/ and renamed, and the person
// reading the message knows it as checkpoint-N/.

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

// `path` becomes the whole new `bytes` or stays as it was: written to
// path.tmp, synced, renamed over it, the directory synced. A failure removes
// path.tmp. Throws WriteError.
void write_file_atomically(const std::string& path, std::string_view bytes);

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

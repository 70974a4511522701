#include "checked_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>

#include "accum/errors.h"

namespace accum::io {

namespace {

const std::string& or_path(const std::string& shown, const std::string& path) { return shown.empty() ? path : shown; }

[[noreturn]] void fail(int err, const std::string& path, const char* action, const std::string& to = {}) {
    throw WriteError(path, err, reason_text(err), errno_name(err), action, to);
}

// Closes on scope exit unless released (an error path that already failed).
class Fd {
public:
    explicit Fd(int fd) : fd_(fd) {}
    ~Fd() {
        if (fd_ >= 0) ::close(fd_);
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const { return fd_; }
    // close(2), checked: NFS and some others report a failed write only here.
    int close() {
        const int fd = fd_;
        fd_ = -1;
        return ::close(fd) == 0 ? 0 : errno;
    }

private:
    int fd_;
};

int open_retrying(const char* path, int flags, mode_t mode = 0) {
    int fd;
    do {
        fd = ::open(path, flags | O_CLOEXEC, mode);
    } while (fd < 0 && errno == EINTR);
    return fd;
}

// 0, or the errno of the write that failed.
int write_all(int fd, std::string_view bytes) {
    const char* p = bytes.data();
    std::size_t left = bytes.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        if (n == 0) return EIO; // a regular file never takes nothing; do not spin
        p += n;
        left -= static_cast<std::size_t>(n);
    }
    return 0;
}

// fsync; a file that cannot be synced (a pipe, a terminal: --metrics /dev/stdout) is no error.
int sync_fd(int fd) {
    if (::fsync(fd) == 0) return 0;
    const int err = errno;
    return err == EINVAL || err == ENOTSUP || err == EROFS ? 0 : err;
}

} // namespace

std::string reason_text(int error_number) {
    std::string text = std::strerror(error_number);
    // "No space left on device" → "no space left on device"; "I/O error" keeps its capitals.
    if (text.size() > 1 && std::isupper(static_cast<unsigned char>(text[0])) &&
        std::islower(static_cast<unsigned char>(text[1])))
        text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
    return text;
}

const char* errno_name(int error_number) {
    switch (error_number) {
    case ENOSPC: return "ENOSPC";
    case EDQUOT: return "EDQUOT";
    case EIO: return "EIO";
    case EROFS: return "EROFS";
    case ENOENT: return "ENOENT";
    case EACCES: return "EACCES";
    case EPERM: return "EPERM";
    case EFBIG: return "EFBIG";
    case ENOTDIR: return "ENOTDIR";
    case EEXIST: return "EEXIST";
    case ENOTEMPTY: return "ENOTEMPTY";
    case EISDIR: return "EISDIR";
    case ENAMETOOLONG: return "ENAMETOOLONG";
    case ESTALE: return "ESTALE";
    default: return "";
    }
}

void write_file(const std::string& path, std::string_view bytes, const std::string& shown) {
    Fd fd(open_retrying(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644));
    if (fd.get() < 0) fail(errno, or_path(shown, path), "creating");
    if (const int err = write_all(fd.get(), bytes)) fail(err, or_path(shown, path), "writing");
    if (const int err = sync_fd(fd.get())) fail(err, or_path(shown, path), "writing");
    if (const int err = fd.close()) fail(err, or_path(shown, path), "writing");
}

FileWriter::FileWriter(const std::string& path, const std::string& shown) : shown_(or_path(shown, path)) {
    fd_ = open_retrying(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd_ < 0) fail(errno, shown_, "creating");
}

FileWriter::~FileWriter() {
    if (fd_ >= 0) ::close(fd_);
}

void FileWriter::write(std::string_view bytes) {
    if (failure_ == 0) failure_ = write_all(fd_, bytes);
    if (failure_ != 0) fail(failure_, shown_, "writing");
    written_ += bytes.size();
}

std::size_t FileWriter::write_or_keep_failure(const void* data, std::size_t size) noexcept {
    if (failure_ == 0 && fd_ >= 0) {
        failure_ = write_all(fd_, std::string_view(static_cast<const char*>(data), size));
        if (failure_ == 0) written_ += size;
    }
    return size;
}

void FileWriter::finish() {
    if (failure_ != 0) fail(failure_, shown_, "writing");
    if (const int err = sync_fd(fd_)) fail(err, shown_, "writing");
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail(errno, shown_, "writing");
}

std::streamsize FileWriterBuf::xsputn(const char* data, std::streamsize n) {
    return static_cast<std::streamsize>(file_.write_or_keep_failure(data, static_cast<std::size_t>(n)));
}

FileWriterBuf::int_type FileWriterBuf::overflow(int_type c) {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    const char ch = traits_type::to_char_type(c);
    file_.write_or_keep_failure(&ch, 1);
    return c;
}

void write_file_atomically(const std::string& path, std::string_view bytes) {
    write_file_atomically(path, [bytes](const std::string& tmp, const std::string& shown) { write_file(tmp, bytes, shown); });
}

void write_file_atomically(const std::string& path,
                           const std::function<void(const std::string& tmp, const std::string& shown)>& write) {
    const std::string tmp = path + ".tmp";
    try {
        write(tmp, path);
        rename_path(tmp, path, path + ".tmp");
    } catch (const WriteError&) {
        ::unlink(tmp.c_str());
        throw;
    }
    const auto slash = path.find_last_of('/');
    const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
    sync_directory(dir);
}

void append_to_file(const std::string& path, std::string_view bytes, bool truncate) {
    Fd fd(open_retrying(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | (truncate ? O_TRUNC : 0), 0644));
    if (fd.get() < 0) fail(errno, path, "writing");
    if (const int err = write_all(fd.get(), bytes)) fail(err, path, "writing");
    if (const int err = fd.close()) fail(err, path, "writing");
}

void sync_file(const std::string& path, const std::string& shown) {
    Fd fd(open_retrying(path.c_str(), O_RDONLY));
    if (fd.get() < 0) fail(errno, or_path(shown, path), "syncing");
    if (const int err = sync_fd(fd.get())) fail(err, or_path(shown, path), "syncing");
}

void sync_directory(const std::string& path, const std::string& shown) {
    Fd fd(open_retrying(path.c_str(), O_RDONLY | O_DIRECTORY));
    if (fd.get() < 0) fail(errno, or_path(shown, path), "syncing");
    if (const int err = sync_fd(fd.get())) fail(err, or_path(shown, path), "syncing");
}

void create_directory(const std::string& path, const std::string& shown) {
    if (::mkdir(path.c_str(), 0755) != 0) fail(errno, or_path(shown, path), "creating");
}

void rename_path(const std::string& from, const std::string& to, const std::string& shown_from) {
    if (::rename(from.c_str(), to.c_str()) != 0) fail(errno, or_path(shown_from, from), "renaming", to);
}

namespace {

// 0, or the errno of the first removal that failed.
int remove_recursively(const std::string& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return errno == ENOENT ? 0 : errno;
    if (S_ISDIR(st.st_mode)) {
        DIR* dir = ::opendir(path.c_str());
        if (!dir) return errno;
        int first = 0;
        while (dirent* e = ::readdir(dir)) {
            const std::string name = e->d_name;
            if (name == "." || name == "..") continue;
            if (const int err = remove_recursively(path + "/" + name); err && !first) first = err;
        }
        ::closedir(dir);
        if (first) return first;
        return ::rmdir(path.c_str()) == 0 || errno == ENOENT ? 0 : errno;
    }
    return ::unlink(path.c_str()) == 0 || errno == ENOENT ? 0 : errno;
}

} // namespace

void remove_tree(const std::string& path, const std::string& shown) {
    if (const int err = remove_recursively(path)) fail(err, or_path(shown, path), "removing");
}

bool remove_tree_quietly(const std::string& path) noexcept {
    try {
        return remove_recursively(path) == 0;
    } catch (...) { // std::string's allocation
        return false;
    }
}

} // namespace accum::io
// SPDX-License-Identifier: GPL-3.0-or-later

#include "accum/run_directory.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>

#include <nlohmann/json.hpp>

namespace accum {

namespace fs = std::filesystem;

namespace {

std::int64_t checkpoint_number(const fs::path& p) {
    static const std::regex re("checkpoint-([0-9]{1,18})");
    std::smatch m;
    const std::string name = p.filename().string();
    if (std::regex_match(name, m, re)) return std::stoll(m[1]);
    return -1;
}

// The weights are model.safetensors, a LoRA run's adapter_model.safetensors, or
// model.pt in a checkpoint of an earlier engine.
bool complete(const fs::path& dir) {
    std::error_code ec;
    for (const char* f : {"optimizer.pt", "rng_state.pt", "trainer_state.json"})
        if (!fs::exists(dir / f, ec)) return false;
    return fs::exists(dir / "model.safetensors", ec) || fs::exists(dir / "adapter_model.safetensors", ec) ||
           fs::exists(dir / "model.pt", ec);
}

constexpr const char* kRunFiles[] = {kRunRecordFile, kOlderRunRecordFile, "metrics.jsonl", "summary.json"};

// `inner` is `outer` or lies inside it.
bool within(const fs::path& inner, const fs::path& outer) {
    std::error_code ec;
    auto a = fs::weakly_canonical(inner, ec);
    if (ec) return false;
    const auto b = fs::weakly_canonical(outer, ec);
    if (ec) return false;
    for (; !a.empty(); a = a.parent_path()) {
        if (a == b) return true;
        if (a == a.parent_path()) break;
    }
    return false;
}

} // namespace

bool is_model_config(const std::string& text) {
    const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    return j.is_object() && (j.contains("model_type") || j.contains("architectures"));
}

std::string run_record_file(const std::string& dir) {
    std::error_code ec;
    if (const auto record = fs::path(dir) / kRunRecordFile; fs::is_regular_file(record, ec)) return record.string();
    const auto older = fs::path(dir) / kOlderRunRecordFile;
    if (!fs::is_regular_file(older, ec)) return {};
    std::ifstream f(older, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    return is_model_config(text) ? std::string() : older.string();
}

std::string run_record_for_resume(const std::string& requested) {
    fs::path path = fs::path(requested).lexically_normal();
    if (path.filename().empty()) path = path.parent_path();
    if (auto record = run_record_file(path.string()); !record.empty()) return record;
    return path.has_parent_path() ? run_record_file(path.parent_path().string()) : std::string();
}

std::vector<std::string> checkpoints_in(const std::string& dir) {
    std::vector<std::pair<std::int64_t, std::string>> found;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const auto n = checkpoint_number(it->path());
        if (n >= 0 && it->is_directory(ec)) found.emplace_back(n, it->path().string());
    }
    std::sort(found.begin(), found.end());
    std::vector<std::string> out;
    for (auto& [n, path] : found) out.push_back(std::move(path));
    return out;
}

std::string latest_checkpoint(const std::string& dir) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return {};
    if (complete(dir)) return dir;
    const auto all = checkpoints_in(dir);
    for (auto it = all.rbegin(); it != all.rend(); ++it)
        if (complete(*it)) return *it;
    return {};
}

std::string checkpoint_to_resume(const std::string& requested) {
    fs::path path = fs::path(requested).lexically_normal();
    if (path.filename().empty()) path = path.parent_path();
    std::error_code ec;
    if (!fs::is_directory(path, ec)) return {};
    if (checkpoint_number(path) >= 0 || fs::exists(path / "trainer_state.json", ec)) return path.string();
    const auto all = checkpoints_in(path.string());
    return all.empty() ? std::string() : all.back();
}

std::int64_t checkpoint_global_step(const std::string& checkpoint_dir) {
    if (checkpoint_dir.empty()) return -1;
    try {
        std::ifstream f(fs::path(checkpoint_dir) / "trainer_state.json");
        return nlohmann::json::parse(f).at("global_step").get<std::int64_t>();
    } catch (const std::exception&) {
        return -1;
    }
}

bool holds_run(const std::string& dir) {
    std::error_code ec;
    for (const char* f : kRunFiles)
        if (fs::exists(fs::path(dir) / f, ec)) return true;
    return !checkpoints_in(dir).empty();
}

std::string output_dir_problem(const RunConfig& config) {
    if (config.output_dir.empty() || config.overwrite_output_dir) return {};
    if (!config.resume_from.empty() && within(config.resume_from, config.output_dir)) return {};
    std::error_code ec;
    // A regular file with records (not /dev/stdout: file_size fails there, and its error value is no size).
    const bool metrics_elsewhere_exists = !config.metrics_file.empty() &&
                                          fs::is_regular_file(config.metrics_file, ec) &&
                                          fs::file_size(config.metrics_file, ec) > 0 && !ec;
    if (!holds_run(config.output_dir) && !metrics_elsewhere_exists) return {};
    const std::string what =
        holds_run(config.output_dir) ? config.output_dir + " already holds a run"
                                     : "the metrics file " + config.metrics_file + " already holds a run's records";
    return what + "; to continue it use --resume " + config.output_dir +
           ", to replace it use --overwrite-output-dir, or choose another --output-dir";
}

bool clear_run(const std::string& dir, std::string& error) {
    std::error_code ec;
    for (const char* f : kRunFiles) {
        fs::remove(fs::path(dir) / f, ec);
        if (ec) {
            error = "cannot remove " + (fs::path(dir) / f).string() + ": " + ec.message();
            return false;
        }
    }
    for (const auto& checkpoint : checkpoints_in(dir)) {
        fs::remove_all(checkpoint, ec);
        if (ec) {
            error = "cannot remove " + checkpoint + ": " + ec.message();
            return false;
        }
    }
    return true;
}

std::string create_run_directory(const std::string& parent, std::string& error) {
    std::error_code ec;
    fs::create_directories(parent, ec);
    if (ec) {
        error = "cannot create " + parent + ": " + ec.message();
        return {};
    }
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    localtime_r(&now, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    for (int n = 1; n < 10000; ++n) {
        const fs::path candidate = fs::path(parent) / (n == 1 ? std::string(stamp) : stamp + ("-" + std::to_string(n)));
        if (fs::create_directory(candidate, ec)) return candidate.string(); // false: it exists already
        if (ec) {
            error = "cannot create " + candidate.string() + ": " + ec.message();
            return {};
        }
    }
    error = "no free run directory name under " + parent;
    return {};
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later

// SPDX-License-Identifier: GPL-3.0-or-later
#include "tensorboard_writer.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "accum/errors.h"
#include "checked_file.h"
#include "proto/tensorboard_event.pb.h"

namespace accum::tensorboard {

namespace fs = std::filesystem;

namespace {

const std::array<std::uint32_t, 256>& crc_table() {
    static const std::array<std::uint32_t, 256> table = [] {
        std::array<std::uint32_t, 256> t{};
        for (std::uint32_t i = 0; i < 256; ++i) {
            std::uint32_t c = i;
            for (int k = 0; k < 8; ++k) c = (c & 1u) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
            t[i] = c;
        }
        return t;
    }();
    return table;
}

void put_le(std::string& out, std::uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) out += static_cast<char>((value >> (8 * i)) & 0xFFu);
}

double now_s() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string host_name() {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
    return name;
}

// Python's round(value, digits) for the Trainer's speed metrics (the half-way
// cases, where Python's correctly rounded result may differ, do not occur in timings).
double rounded(double value, int digits) {
    const double scale = std::pow(10.0, digits);
    return std::round(value * scale) / scale;
}

std::string serialised(const Event& event) {
    std::string bytes;
    event.SerializeToString(&bytes);
    return bytes;
}

} // namespace

std::uint32_t crc32c(std::string_view bytes) {
    const auto& table = crc_table();
    std::uint32_t crc = 0xFFFFFFFFu;
    for (unsigned char b : bytes) crc = table[(crc ^ b) & 0xFFu] ^ (crc >> 8);
    return crc ^ 0xFFFFFFFFu;
}

std::uint32_t masked_crc32c(std::string_view bytes) {
    const std::uint32_t crc = crc32c(bytes);
    return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

std::string framed_record(std::string_view data) {
    std::string length;
    put_le(length, data.size(), 8);
    std::string out = length;
    put_le(out, masked_crc32c(length), 4);
    out.append(data);
    put_le(out, masked_crc32c(data), 4);
    return out;
}

std::string logdir_name(std::time_t now, const std::string& host) {
    static const char* const months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                         "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    std::tm local{};
    localtime_r(&now, &local);
    char text[64];
    std::snprintf(text, sizeof text, "%s%02d_%02d-%02d-%02d_", months[local.tm_mon % 12], local.tm_mday,
                  local.tm_hour, local.tm_min, local.tm_sec);
    return text + host;
}

EventWriter::EventWriter(const RunConfig& config)
    : logging_steps_(config.logging_steps > 0 ? config.logging_steps : 1),
      samples_at_log_(config.resume_from.empty() ? 0 : -1) {
    const std::time_t now = std::time(nullptr);
    const std::string host = host_name();
    const fs::path dir = fs::path(config.output_dir) / "runs" / logdir_name(now, host);
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw WriteError(dir.string(), ec.value(), io::reason_text(ec.value()), io::errno_name(ec.value()), "creating");
    char name[128];
    std::snprintf(name, sizeof name, "events.out.tfevents.%010lld.", static_cast<long long>(now));
    path_ = (dir / (name + host + "." + std::to_string(getpid()) + ".0")).string();
    Event first;
    first.set_wall_time(now_s());
    first.set_file_version("brain.Event:2");
    io::append_to_file(path_, framed_record(serialised(first)), /*truncate=*/true);
}

void EventWriter::add_scalar(std::string& out, const std::string& tag, double value, std::int64_t step) {
    Event event;
    event.set_wall_time(now_s());
    event.set_step(step);
    auto* v = event.mutable_summary()->add_value();
    v->set_tag(tag);
    v->set_simple_value(static_cast<float>(value));
    out += framed_record(serialised(event));
}

void EventWriter::append(const std::string& bytes) {
    if (failed_ || bytes.empty()) return;
    try {
        io::append_to_file(path_, bytes);
    } catch (const WriteError&) {
        failed_ = true; // the run ends with this error; what follows is not written
        throw;
    }
}

void EventWriter::on_step(const StepRecord& r) {
    loss_since_log_ += r.loss;
    ++steps_since_log_;
    session_loss_ += r.loss;
    ++session_steps_;
    last_epoch_ = r.epoch;
    last_step_ = r.step;
    peak_since_log_ = std::max(peak_since_log_, r.peak_memory_bytes);
    if (r.step % logging_steps_ != 0) return; // the Trainer's should_log
    std::string out;
    add_scalar(out, "train/loss", loss_since_log_ / static_cast<double>(steps_since_log_), r.step);
    add_scalar(out, "train/grad_norm", r.grad_norm, r.step);
    add_scalar(out, "train/learning_rate", r.learning_rate, r.step);
    add_scalar(out, "train/epoch", r.epoch, r.step);
    add_scalar(out, "accum/peak_memory_bytes", static_cast<double>(peak_since_log_), r.step);
    if (samples_at_log_ >= 0 && r.elapsed_s > elapsed_at_log_)
        add_scalar(out, "accum/samples_per_second",
                   static_cast<double>(r.samples_seen - samples_at_log_) / (r.elapsed_s - elapsed_at_log_), r.step);
    if (r.threads > 0) add_scalar(out, "accum/threads", r.threads, r.step);
    // The gradient noise scale and the logged window's raw figures, where measured
    // (under accum/: the train/ tags are the Trainer's, and only those).
    if (std::isfinite(r.noise_scale)) add_scalar(out, "accum/noise_scale", r.noise_scale, r.step);
    if (std::isfinite(r.grad_norm_sq_small) && std::isfinite(r.grad_norm_sq_big)) {
        add_scalar(out, "accum/grad_norm_sq_small", r.grad_norm_sq_small, r.step);
        add_scalar(out, "accum/grad_norm_sq_big", r.grad_norm_sq_big, r.step);
        add_scalar(out, "accum/batch_small", r.batch_small, r.step);
        add_scalar(out, "accum/batch_big", r.batch_big, r.step);
    }
    loss_since_log_ = 0.0;
    steps_since_log_ = 0;
    peak_since_log_ = 0;
    samples_at_log_ = r.samples_seen;
    elapsed_at_log_ = r.elapsed_s;
    append(out);
}

void EventWriter::on_eval(const EvalRecord& r) {
    // evaluate()'s metrics (speed_metrics rounds the runtime to 4 decimals, the
    // rates to 3), then log() adds the epoch; rewrite_logs makes eval_x eval/x.
    std::string out;
    add_scalar(out, "eval/loss", r.eval_loss, r.step);
    add_scalar(out, "eval/accuracy", r.eval_accuracy, r.step);
    add_scalar(out, "eval/f1", r.eval_f1, r.step);
    add_scalar(out, "eval/runtime", rounded(r.runtime_s, 4), r.step);
    add_scalar(out, "eval/samples_per_second",
               r.runtime_s > 0 ? rounded(static_cast<double>(r.samples) / r.runtime_s, 3) : 0.0, r.step);
    add_scalar(out, "eval/steps_per_second",
               r.runtime_s > 0 ? rounded(static_cast<double>(r.batches) / r.runtime_s, 3) : 0.0, r.step);
    add_scalar(out, "train/epoch", r.epoch, r.step);
    append(out);
}

void EventWriter::on_summary(const SummaryRecord& r) {
    try {
        if (r.status == RunStatus::Completed && !failed_) {
            // _finalize_training's log: speed_metrics("train", …), train_loss, the epoch.
            const double runtime = r.train_runtime_s;
            std::string out;
            add_scalar(out, "train/train_runtime", rounded(runtime, 4), last_step_);
            add_scalar(out, "train/train_samples_per_second", rounded(r.samples_per_second, 3), last_step_);
            add_scalar(out, "train/train_steps_per_second",
                       runtime > 0 ? rounded(static_cast<double>(session_steps_) / runtime, 3) : 0.0, last_step_);
            add_scalar(out, "train/train_loss",
                       session_steps_ > 0 ? session_loss_ / static_cast<double>(session_steps_) : 0.0, last_step_);
            add_scalar(out, "train/epoch", last_epoch_, last_step_);
            io::append_to_file(path_, out);
        }
        io::sync_file(path_);
    } catch (const WriteError& e) {
        summary_error_ = e.what();
    }
}

} // namespace accum::tensorboard

// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// TensorBoard event files (--report-to tensorboard), written from the same
// records as metrics.jsonl, with the scalars the Trainer's TensorBoardCallback
// writes for the same run: its tags (train/loss, train/grad_norm,
// train/learning_rate, train/epoch every logging_steps optimizer steps; eval/loss,
// eval/accuracy, eval/f1, eval/runtime, eval/samples_per_second,
// eval/steps_per_second and train/epoch after each evaluation; the train/train_*
// figures at the end), at the same global steps, with the same values. The
// engine's own figures go under accum/. Every style writes these tags (the code
// panel's Accelerate and plain-loop scripts log through no tracker).
//
// Layout as the Trainer's default logging_dir under its output_dir:
// <output_dir>/runs/<Mon DD_HH-MM-SS>_<host>/events.out.tfevents.<time>.<host>.<pid>.0
// (torch's SummaryWriter's file name). Each record is TensorBoard's framing of a
// serialised Event (protobuf, engine/proto/tensorboard_event.proto); the events
// of one record are appended in one write, so a run that ends (SIGTERM, a crash)
// loses at most the record being written, as metrics.jsonl does. Torch-free.

#include <cstdint>
#include <ctime>
#include <string>
#include <string_view>

#include "accum/run_config.h"
#include "accum/sink.h"

namespace accum::tensorboard {

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78): crc32c("123456789") = 0xE3069283.
std::uint32_t crc32c(std::string_view bytes);
// TensorBoard's (TFRecord's) mask: ((crc >> 15) | (crc << 17)) + 0xa282ead8.
std::uint32_t masked_crc32c(std::string_view bytes);
// One record: the length (uint64, little-endian), the masked CRC of those 8
// bytes, the data, the masked CRC of the data (CRCs as uint32, little-endian).
std::string framed_record(std::string_view data);

// The Trainer's default_logdir() name for a run started at `now` (local time)
// on `host`: "Dec04_21-24-07_host" (English month names whatever the locale).
std::string logdir_name(std::time_t now, const std::string& host);

class EventWriter final : public Sink {
public:
    // Creates <config.output_dir>/runs/<logdir_name>/ and the event file, and
    // writes its first record (file_version "brain.Event:2"). Throws WriteError.
    explicit EventWriter(const RunConfig& config);
    const std::string& path() const { return path_; }

    void on_step(const StepRecord& r) override;
    void on_eval(const EvalRecord& r) override;
    // The Trainer's last log (a completed run only), then the file is synced;
    // never throws: summary_error() says what could not be written.
    void on_summary(const SummaryRecord& r) override;
    const std::string& summary_error() const { return summary_error_; }

private:
    // Appends one event holding one scalar to `out`, framed.
    static void add_scalar(std::string& out, const std::string& tag, double value, std::int64_t step);
    void append(const std::string& bytes);

    std::string path_;
    std::int64_t logging_steps_ = 1;
    bool failed_ = false;
    std::string summary_error_;
    // The Trainer's loss since the last log (_maybe_log_save_evaluate) and the
    // mean window loss of this session's steps (_finalize_training's train_loss).
    double loss_since_log_ = 0.0;
    std::int64_t steps_since_log_ = 0;
    double session_loss_ = 0.0;
    std::int64_t session_steps_ = 0;
    double last_epoch_ = 0.0;
    std::int64_t last_step_ = 0;
    // Since the last log: the highest step peak, and where samples and time stood.
    std::int64_t peak_since_log_ = 0;
    std::int64_t samples_at_log_ = -1;
    double elapsed_at_log_ = 0.0;
};

} // namespace accum::tensorboard

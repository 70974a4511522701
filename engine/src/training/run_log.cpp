#include "training/run_log.h"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "accum/run_config.h"

namespace accum {

namespace {

std::string fixed(double v, int precision) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", precision, v);
    return buf;
}

class PlainLog final : public RunLog {
public:
    explicit PlainLog(std::int64_t logging_steps) : logging_steps_(logging_steps) {}

    std::optional<std::string> on_step(const StepRecord& r, const StepPosition& position) override {
        if (r.step % logging_steps_ != 0 && !position.last) return std::nullopt;
        const double dt = r.elapsed_s - time_at_last_line_;
        const double rate = dt > 0 ? static_cast<double>(r.samples_seen - samples_at_last_line_) / dt : 0.0;
        samples_at_last_line_ = r.samples_seen;
        time_at_last_line_ = r.elapsed_s;
        std::ostringstream line;
        line << "step " << r.step << "/" << position.total_updates << "  epoch " << fixed(r.epoch, 2) << "  loss "
             << fixed(r.loss, 4) << "  lr " << r.learning_rate << "  grad_norm " << fixed(r.grad_norm, 3) << "  "
             << fixed(rate, 0) << " samples/s  mem " << format_byte_size(r.peak_memory_bytes);
        if (std::isfinite(r.noise_scale)) line << "  noise_scale " << fixed(r.noise_scale, 0);
        return line.str();
    }

    std::optional<std::string> on_eval(const EvalRecord& r) override {
        return "eval  epoch " + fixed(r.epoch, 2) + "  step " + std::to_string(r.step) + "  eval_loss " +
               fixed(r.eval_loss, 4) + "  eval_accuracy " + fixed(r.eval_accuracy, 4) + "  eval_f1 " +
               fixed(r.eval_f1, 4);
    }

private:
    std::int64_t logging_steps_;
    std::int64_t samples_at_last_line_ = 0;
    double time_at_last_line_ = 0.0;
};

} // namespace

std::unique_ptr<RunLog> make_plain_log(std::int64_t logging_steps) {
    return std::make_unique<PlainLog>(logging_steps > 0 ? logging_steps : 1);
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later

#include "accum/metrics_io.h"

#include <cmath>
#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

namespace accum {

using nlohmann::json;

const char* to_string(RunStatus status) {
    switch (status) {
    case RunStatus::Completed: return "completed";
    case RunStatus::Stopped: return "stopped";
    case RunStatus::OutOfMemory: return "out_of_memory";
    case RunStatus::Diverged: return "diverged";
    case RunStatus::Error: return "error";
    }
    return "error";
}

std::optional<RunStatus> parse_run_status(const std::string& text) {
    for (auto s : {RunStatus::Completed, RunStatus::Stopped, RunStatus::OutOfMemory, RunStatus::Diverged,
                   RunStatus::Error})
        if (text == to_string(s)) return s;
    return std::nullopt;
}

namespace {

// JSON has no NaN or infinity: write them as null, read null back as NaN.
json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

double read_double(const json& j, const char* key) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return std::nan("");
    if (!it->is_number()) throw std::runtime_error(std::string("field '") + key + "' is not a number");
    return it->get<double>();
}

// A whole number that fits in 64 bits; 12.0 is accepted, 1.5 or 1e30 are errors
// (converting them would be undefined behaviour).
std::int64_t read_int(const json& j, const char* key) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return 0;
    if (it->is_number_integer() && !(it->is_number_unsigned() &&
                                     it->get<std::uint64_t>() > std::uint64_t(std::numeric_limits<std::int64_t>::max())))
        return it->get<std::int64_t>();
    if (it->is_number_float()) {
        const double v = it->get<double>();
        // 2⁶³ is exactly representable; every double below it in magnitude converts.
        if (v == std::trunc(v) && v >= -9223372036854775808.0 && v < 9223372036854775808.0)
            return static_cast<std::int64_t>(v);
    }
    throw std::runtime_error(std::string("field '") + key + "' is not a whole number within 64 bits");
}

} // namespace

std::string to_json_line(const MicroStepRecord& r) {
    return json{{"type", "micro_step"}, {"micro_step", r.micro_step}, {"step", r.step},
                {"window_index", r.window_index}, {"window_size", r.window_size}, {"sync", r.sync},
                {"loss", number(r.loss)}, {"grad_norm", number(r.grad_norm)}, {"epoch", number(r.epoch)},
                {"grad_allreduces", r.grad_allreduces}, {"autocast", r.autocast},
                {"loss_scale", number(r.loss_scale)}}
        .dump();
}

std::string to_json_line(const StepRecord& r) {
    return json{{"type", "step"},
                {"step", r.step},
                {"micro_step", r.micro_step},
                {"epoch", number(r.epoch)},
                {"loss", number(r.loss)},
                {"learning_rate", number(r.learning_rate)},
                {"grad_norm", number(r.grad_norm)},
                {"samples_seen", r.samples_seen},
                {"elapsed_s", number(r.elapsed_s)},
                {"memory_bytes", r.memory_bytes},
                {"peak_memory_bytes", r.peak_memory_bytes},
                {"peak_activations_bytes", r.peak_activations_bytes},
                {"peak_optimizer_step_bytes", r.peak_optimizer_step_bytes},
                {"grad_allreduces", r.grad_allreduces},
                {"allreduce_seconds", number(r.allreduce_seconds)},
                {"allreduce_bytes", r.allreduce_bytes},
                {"loss_scale", number(r.loss_scale)},
                {"skipped", r.skipped},
                {"grad_norm_sq_small", number(r.grad_norm_sq_small)},
                {"grad_norm_sq_big", number(r.grad_norm_sq_big)},
                {"batch_small", number(r.batch_small)},
                {"batch_big", number(r.batch_big)},
                {"noise_scale", number(r.noise_scale)}}
        .dump();
}

std::string to_json_line(const EvalRecord& r) {
    return json{{"type", "eval"},           {"step", r.step},
                {"epoch", number(r.epoch)}, {"eval_loss", number(r.eval_loss)},
                {"eval_accuracy", number(r.eval_accuracy)}, {"eval_f1", number(r.eval_f1)}}
        .dump();
}

std::string to_json_line(const MemoryRecord& r) {
    return json{{"type", "memory"},         {"elapsed_s", number(r.elapsed_s)},
                {"memory_bytes", r.memory_bytes}, {"peak_memory_bytes", r.peak_memory_bytes},
                {"reserved_bytes", r.reserved_bytes}, {"budget_bytes", r.budget_bytes},
                {"rss_bytes", r.rss_bytes}, {"cuda", r.cuda},
                {"parameters_bytes", r.parameters_bytes}, {"gradients_bytes", r.gradients_bytes},
                {"optimizer_state_bytes", r.optimizer_state_bytes}, {"activations_bytes", r.activations_bytes},
                {"interval_peak_bytes", r.interval_peak_bytes}, {"peak_parameters_bytes", r.peak_parameters_bytes},
                {"peak_gradients_bytes", r.peak_gradients_bytes},
                {"peak_optimizer_state_bytes", r.peak_optimizer_state_bytes},
                {"peak_activations_bytes", r.peak_activations_bytes},
                {"peak_optimizer_step_bytes", r.peak_optimizer_step_bytes}, {"rank", r.rank},
                {"frozen_parameters_bytes", r.frozen_parameters_bytes}}
        .dump();
}

std::string to_json_line(const SummaryRecord& r) {
    json j{{"type", "summary"},
           {"status", to_string(r.status)},
           {"message", r.message},
           {"optimizer_steps", r.optimizer_steps},
           {"micro_steps", r.micro_steps},
           {"samples_seen", r.samples_seen},
           {"train_runtime_s", number(r.train_runtime_s)},
           {"samples_per_second", number(r.samples_per_second)},
           {"peak_memory_bytes", r.peak_memory_bytes},
           {"final_loss", number(r.final_loss)},
           {"exit_code", r.exit_code},
           {"device", r.device},
           {"world_size", r.world_size},
           {"cpu_kernels", r.cpu_kernels},
           {"noise_scale", number(r.noise_scale)}};
    if (!r.detail.code.empty()) {
        j["message_code"] = r.detail.code;
        j["message_args"] = r.detail.args;
    }
    if (r.suggested_batch_size > 0) {
        j["suggested_batch_size"] = r.suggested_batch_size;
        j["suggested_accumulation_steps"] = r.suggested_accumulation_steps;
        if (r.suggested_gradient_checkpointing) j["suggested_gradient_checkpointing"] = true;
    }
    return j.dump();
}

std::optional<AnyRecord> parse_json_line(const std::string& line, std::string& error) {
    json j;
    try {
        j = json::parse(line);
    } catch (const json::exception& e) { // parse_error, or out_of_range for a number that overflows
        error = std::string("not JSON: ") + e.what();
        return std::nullopt;
    }
    if (!j.is_object() || !j.contains("type") || !j["type"].is_string()) {
        error = "not a record: no \"type\" field";
        return std::nullopt;
    }
    const std::string type = j["type"].get<std::string>();
    try {
        if (type == "step") {
            StepRecord r;
            r.step = read_int(j, "step");
            r.micro_step = read_int(j, "micro_step");
            r.epoch = read_double(j, "epoch");
            r.loss = read_double(j, "loss");
            r.learning_rate = read_double(j, "learning_rate");
            r.grad_norm = read_double(j, "grad_norm");
            r.samples_seen = read_int(j, "samples_seen");
            r.elapsed_s = read_double(j, "elapsed_s");
            r.memory_bytes = read_int(j, "memory_bytes");
            r.peak_memory_bytes = read_int(j, "peak_memory_bytes");
            r.peak_activations_bytes = read_int(j, "peak_activations_bytes");
            r.peak_optimizer_step_bytes = read_int(j, "peak_optimizer_step_bytes");
            r.grad_allreduces = read_int(j, "grad_allreduces");
            r.allreduce_seconds = j.contains("allreduce_seconds") ? read_double(j, "allreduce_seconds") : 0.0;
            r.allreduce_bytes = read_int(j, "allreduce_bytes");
            r.loss_scale = j.contains("loss_scale") ? read_double(j, "loss_scale") : 1.0;
            r.skipped = j.value("skipped", false);
            // Absent in a record written before the noise scale: not measured.
            r.grad_norm_sq_small = read_double(j, "grad_norm_sq_small");
            r.grad_norm_sq_big = read_double(j, "grad_norm_sq_big");
            r.batch_small = j.contains("batch_small") ? read_double(j, "batch_small") : 0.0;
            r.batch_big = j.contains("batch_big") ? read_double(j, "batch_big") : 0.0;
            r.noise_scale = read_double(j, "noise_scale");
            return r;
        }
        if (type == "eval") {
            EvalRecord r;
            r.step = read_int(j, "step");
            r.epoch = read_double(j, "epoch");
            r.eval_loss = read_double(j, "eval_loss");
            r.eval_accuracy = read_double(j, "eval_accuracy");
            r.eval_f1 = read_double(j, "eval_f1");
            return r;
        }
        if (type == "memory") {
            MemoryRecord r;
            r.elapsed_s = read_double(j, "elapsed_s");
            r.memory_bytes = read_int(j, "memory_bytes");
            r.peak_memory_bytes = read_int(j, "peak_memory_bytes");
            r.reserved_bytes = read_int(j, "reserved_bytes");
            r.budget_bytes = read_int(j, "budget_bytes");
            r.rss_bytes = read_int(j, "rss_bytes");
            r.cuda = j.value("cuda", false);
            r.parameters_bytes = read_int(j, "parameters_bytes");
            r.frozen_parameters_bytes = read_int(j, "frozen_parameters_bytes");
            r.gradients_bytes = read_int(j, "gradients_bytes");
            r.optimizer_state_bytes = read_int(j, "optimizer_state_bytes");
            r.activations_bytes = read_int(j, "activations_bytes");
            r.interval_peak_bytes = read_int(j, "interval_peak_bytes");
            r.peak_parameters_bytes = read_int(j, "peak_parameters_bytes");
            r.peak_gradients_bytes = read_int(j, "peak_gradients_bytes");
            r.peak_optimizer_state_bytes = read_int(j, "peak_optimizer_state_bytes");
            r.peak_activations_bytes = read_int(j, "peak_activations_bytes");
            r.peak_optimizer_step_bytes = read_int(j, "peak_optimizer_step_bytes");
            r.rank = static_cast<int>(read_int(j, "rank"));
            return r;
        }
        if (type == "micro_step") {
            MicroStepRecord r;
            r.micro_step = read_int(j, "micro_step");
            r.step = read_int(j, "step");
            r.window_index = static_cast<int>(read_int(j, "window_index"));
            r.window_size = static_cast<int>(read_int(j, "window_size"));
            r.sync = j.value("sync", false);
            r.loss = read_double(j, "loss");
            r.grad_norm = read_double(j, "grad_norm");
            r.epoch = read_double(j, "epoch");
            r.grad_allreduces = read_int(j, "grad_allreduces");
            r.autocast = j.value("autocast", false);
            r.loss_scale = j.contains("loss_scale") ? read_double(j, "loss_scale") : 0.0;
            return r;
        }
        if (type == "summary") {
            SummaryRecord r;
            const auto status = parse_run_status(j.value("status", std::string()));
            if (!status) {
                error = "summary has an unknown status";
                return std::nullopt;
            }
            r.status = *status;
            r.message = j.value("message", std::string());
            r.optimizer_steps = read_int(j, "optimizer_steps");
            r.micro_steps = read_int(j, "micro_steps");
            r.samples_seen = read_int(j, "samples_seen");
            r.train_runtime_s = read_double(j, "train_runtime_s");
            r.samples_per_second = read_double(j, "samples_per_second");
            r.peak_memory_bytes = read_int(j, "peak_memory_bytes");
            r.final_loss = read_double(j, "final_loss");
            r.exit_code = static_cast<int>(read_int(j, "exit_code"));
            r.device = j.value("device", std::string());
            r.suggested_batch_size = read_int(j, "suggested_batch_size");
            r.suggested_accumulation_steps = read_int(j, "suggested_accumulation_steps");
            r.suggested_gradient_checkpointing = j.value("suggested_gradient_checkpointing", false);
            r.world_size = j.contains("world_size") ? static_cast<int>(read_int(j, "world_size")) : 1;
            r.cpu_kernels = j.value("cpu_kernels", std::string());
            r.noise_scale = read_double(j, "noise_scale");
            r.detail.code = j.value("message_code", std::string());
            if (const auto it = j.find("message_args"); it != j.end() && it->is_object())
                for (const auto& [key, value] : it->items())
                    if (value.is_string()) r.detail.args[key] = value.get<std::string>();
            return r;
        }
    } catch (const std::exception& e) {
        error = e.what();
        return std::nullopt;
    }
    error = "unknown record type '" + type + "'";
    return std::nullopt;
}

std::vector<std::string> records_through_step(const std::string& metrics_path, std::int64_t step) {
    std::vector<std::string> kept;
    std::ifstream in(metrics_path);
    std::string line;
    while (std::getline(in, line)) {
        std::string error;
        const auto record = parse_json_line(line, error);
        if (!record || std::holds_alternative<SummaryRecord>(*record)) continue;
        std::int64_t at = 0; // memory records belong to the steps before them
        if (const auto* s = std::get_if<StepRecord>(&*record)) at = s->step;
        else if (const auto* e = std::get_if<EvalRecord>(&*record)) at = e->step;
        else if (const auto* m = std::get_if<MicroStepRecord>(&*record)) at = m->step + 1;
        if (step >= 0 && at <= step) kept.push_back(line);
    }
    return kept;
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later

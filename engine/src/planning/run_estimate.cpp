// accum/run_estimate.h: the configured model, built as a run builds it
// (build_run_parts), probed with memory/memory_estimate.h's pieces. Part of the
// planning layer, above training: it builds a run's parts, never a run.
#include "accum/run_estimate.h"

#include <algorithm>
#include <mutex>
#include <chrono>
#include <cmath>
#include <sstream>

#include <ATen/core/Generator.h>
#include <ATen/Context.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "accum/errors.h"
#include "memory/counting_allocator.h"
#include "memory/cuda_memory.h"
#include "memory/estimate_guard.h"
#include "memory/memory_estimate.h"
#include "memory/out_of_memory.h"
#include "models/pt2_model.h"
#include "training/mixed_precision.h"
#include "training/run_parts.h"

namespace accum {

namespace {

std::string bytes_text(double bytes) { return format_byte_size(static_cast<std::int64_t>(std::llround(bytes))); }

memory::OptimizerSpec optimizer_spec(const RunConfig& c) {
    memory::OptimizerSpec spec;
    switch (c.optimizer) {
    case OptimizerKind::Sgd:
        spec.kind = memory::OptimizerSpec::Kind::Sgd;
        spec.momentum = c.momentum;
        spec.weight_decay = c.weight_decay;
        break;
    case OptimizerKind::AdamW:
        spec.kind = memory::OptimizerSpec::Kind::AdamW;
        spec.weight_decay = c.weight_decay;
        break;
    }
    return spec;
}

memory::AllocatorReadings readings_for(const torch::Device& device) {
    if (!device.is_cuda()) return memory::cpu_counting_allocator();
    const int index = device.index();
    memory::AllocatorReadings r;
    r.device = device;
    r.current = [index] { return memory::cuda_stats(index).allocated; };
    r.peak = [index] { return memory::cuda_stats(index).peak_allocated; };
    r.reset_peak = [index] { memory::cuda_reset_peak(index); };
    return r;
}

// The global CPU generator as it was: an estimate leaves the random stream alone.
class KeepGeneratorState {
public:
    KeepGeneratorState() : generator_(at::globalContext().defaultGenerator(c10::DeviceType::CPU)) {
        const std::lock_guard<std::mutex> lock(generator_.mutex());
        state_ = generator_.clone();
    }
    ~KeepGeneratorState() {
        const std::lock_guard<std::mutex> lock(generator_.mutex());
        generator_.set_state(state_.get_state());
    }

private:
    at::Generator generator_;
    at::Generator state_;
};

} // namespace


std::int64_t training_samples(const RunConfig& config) {
    if (const auto n = builtin_train_size(config.dataset); n > 0) return n;
    try {
        return load_dataset(config).train.size();
    } catch (const std::exception&) {
        return 0;
    }
}

std::vector<std::int64_t> probe_sizes(std::int64_t b) {
    if (b <= 1) return {1};
    if (b <= 32) return {(b + 1) / 2, b};
    return {16, 32};
}

double RunMemoryEstimate::activations_at(std::int64_t b) const {
    return activation_fixed_bytes + activation_per_sample_bytes * static_cast<double>(b);
}

double RunMemoryEstimate::activations_at(std::int64_t b, std::int64_t k) const {
    return std::max(0.0, activations_at(b) - (k == 1 ? static_cast<double>(returned_gradient_bytes) : 0.0));
}

double RunMemoryEstimate::peak_at(std::int64_t b, std::int64_t k) const {
    const double activations = activations_at(b, k);
    return static_cast<double>(static_bytes()) + std::max(activations, static_cast<double>(step_temporary_bytes));
}

double RunMemoryEstimate::process_at(std::int64_t b, std::int64_t k) const {
    return (tensors_in_host_memory ? peak_at(b, k) : 0.0) + static_cast<double>(process_overhead_bytes + save_bytes);
}

std::string RunMemoryEstimate::describe() const {
    if (!ok) return "no estimate: " + error + "\n";
    std::ostringstream out;
    out << model << " on " << device << (gradient_checkpointing ? ", gradient checkpointing" : "") << "\n";
    for (const auto& d : by_dtype) {
        out << "  parameters       " << d.dtype << "  " << bytes_text(d.parameters_bytes) << "\n";
        out << "  gradients        " << d.dtype << "  " << bytes_text(d.gradients_bytes) << "\n";
        out << "  optimizer state  " << d.dtype << "  " << bytes_text(d.optimizer_state_bytes) << "\n";
    }
    if (frozen_parameters_bytes > 0)
        out << "  of the parameters, frozen weights " << bytes_text(frozen_parameters_bytes)
            << " (no gradients, no optimizer state); trainable " << bytes_text(parameters_bytes - frozen_parameters_bytes)
            << "\n";
    out << "  activations      " << bytes_text(activation_per_sample_bytes) << " per sample + "
        << bytes_text(activation_fixed_bytes) << " (probed at micro-batch";
    for (std::size_t i = 0; i < probes.size(); ++i)
        out << (i ? (i + 1 == probes.size() ? " and " : ", ") : " ") << probes[i].batch_size;
    out << ")\n";
    if (step_temporary_bytes > 0) out << "  optimizer step   " << bytes_text(step_temporary_bytes) << " of temporaries\n";
    if (returned_gradient_bytes > 0)
        out << "  of the activations, " << bytes_text(static_cast<double>(returned_gradient_bytes))
            << " are the gradients the compiled step returns at once: added into the window's gradients from its "
               "second micro-batch on; at K = 1 they are the gradients\n";
    out << "predicted peak " << bytes_text(predicted_peak_bytes) << " at micro-batch " << batch_size << " × "
        << accumulation_steps << " (effective batch " << effective_batch << "): activations "
        << bytes_text(activation_bytes) << " + parameters, gradients and optimizer state "
        << bytes_text(static_cast<double>(static_bytes()))
        << (returned_gradient_bytes > 0 ? "; any K above 1 gives the same peak\n"
                                        : "; more accumulation steps do not change it\n");
    out << "the whole process " << bytes_text(process_bytes) << " of host memory, checkpoints included: "
        << (tensors_in_host_memory ? "the tensors' peak + " : "") << bytes_text(static_cast<double>(process_overhead_bytes))
        << " of the process itself (libraries, data, measured) + " << bytes_text(static_cast<double>(save_bytes))
        << " for saving a checkpoint (the largest tensor)\n";
    return out.str();
}

RunMemoryEstimate estimate_run_memory(const RunConfig& config, const std::function<bool()>& cancelled) {
    const auto start = std::chrono::steady_clock::now();
    RunMemoryEstimate e;
    e.batch_size = config.batch_size;
    e.accumulation_steps = config.accumulation_steps;
    e.effective_batch = config.effective_batch();
    e.gradient_checkpointing = config.gradient_checkpointing;
    // A run that starts waits for this estimate, which stops for it.
    const memory::EstimateInProgress exclusive;
    auto stop_here = [&] {
        if (exclusive.run_elsewhere()) {
            e.cancelled = e.busy = true;
            e.error = "a run is training in this process; the estimate waits for it to end";
            e.exit_code = exit_code::interrupted;
            return true;
        }
        if (!cancelled || !cancelled()) return false;
        e.cancelled = true;
        e.error = "cancelled";
        e.exit_code = exit_code::interrupted;
        return true;
    };
    if (const auto problems = validate(config); !problems.empty()) {
        for (const auto& p : problems) e.error += (e.error.empty() ? "" : "; ") + p.to_string();
        e.exit_code = exit_code::invalid_arguments;
        return e;
    }
    if (stop_here()) return e;

    const RunConfig c = for_measurement(config);

    memory::install_counting_allocator();
    const KeepGeneratorState keep_generator;
    try {
        memory::set_cpu_budget(0);
        const auto parts = build_run_parts(c); // the data loaded uncounted, as a run loads them
        const auto& device = parts->device;
        e.device = device.str();
        e.model = parts->model->describe();
        if (stop_here()) return e;

        const auto parameters = parts->model->parameters();
        const auto fixed = memory::estimate_static(parameters, optimizer_spec(c), device);
        for (const auto& d : fixed.by_dtype)
            e.by_dtype.push_back({d.dtype, d.parameters_bytes, d.gradients_bytes, d.optimizer_state_bytes});
        e.parameters_bytes = fixed.total.parameters_bytes;
        e.frozen_parameters_bytes = fixed.total.frozen_parameters_bytes;
        e.gradients_bytes = fixed.total.gradients_bytes;
        e.optimizer_state_bytes = fixed.total.optimizer_state_bytes;
        e.step_temporary_bytes = fixed.step_temporary_bytes;

        // One micro-batch as the loops run it: the first b samples, forward (under
        // the run's autocast) and backward of the loss divided by K.
        auto& model = *parts->model;
        model.train();
        const auto& train = parts->data.train;
        const double k = static_cast<double>(c.accumulation_steps);
        auto micro_step = [&](std::int64_t b) {
            if (stop_here()) return;
            const auto batch = train.gather(torch::arange(b, torch::kLong) % train.size()).to(device);
            torch::Tensor loss;
            {
                AutocastScope autocast(device.type(), c.mixed_precision);
                loss = model(batch).loss / k;
            }
            loss.backward();
        };
        memory::CountingScope counting;
        const auto points =
            memory::probe_activations(micro_step, parameters, probe_sizes(c.batch_size), readings_for(device));
        if (e.cancelled) return e;
        const auto fit = memory::fit_line(points);
        for (const auto& p : points) e.probes.push_back({p.batch_size, p.bytes});
        e.activation_fixed_bytes = fit.fixed_bytes;
        e.activation_per_sample_bytes = fit.per_sample_bytes;
        if (c.model == ModelKind::File && is_pt2_package(c.model_file)) e.returned_gradient_bytes = e.gradients_bytes;
        e.activation_bytes = e.activations_at(c.batch_size, c.accumulation_steps);
        e.predicted_peak_bytes = e.peak_at(c.batch_size, c.accumulation_steps);
        // The process: what is resident now and is no tensor the estimate holds
        // (the parameters were made before counting began; the probe's gradients
        // are counted; freed blocks the allocator keeps are tensors' memory).
        e.tensors_in_host_memory = device.is_cpu();
        const std::int64_t uncounted_parameters = e.tensors_in_host_memory ? e.parameters_bytes : 0;
        e.process_overhead_bytes =
            std::max<std::int64_t>(0, memory::process_rss_bytes() - memory::cpu_counters().current -
                                          memory::cached_block_bytes() - uncounted_parameters);
        for (const auto& p : parameters)
            e.save_bytes = std::max<std::int64_t>(e.save_bytes, p.numel() * static_cast<std::int64_t>(p.element_size()));
        e.process_bytes = e.process_at(c.batch_size, c.accumulation_steps);
        e.ok = true;
    } catch (const DataError& ex) {
        e.error = ex.what();
        e.exit_code = exit_code::data_error;
    } catch (const ConfigError& ex) {
        e.error = ex.what();
        e.exit_code = exit_code::invalid_arguments;
    } catch (const std::exception& ex) {
        const std::string what = error_text(ex);
        const bool oom = is_out_of_memory_error(ex);
        e.error = (oom ? "out of memory while probing: " : "") + what.substr(0, what.find('\n'));
        e.exit_code = oom ? exit_code::out_of_memory : exit_code::failure;
    }
    memory::release_cached_blocks();
    e.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return e;
}

std::string to_json_text(const RunMemoryEstimate& e) {
    using nlohmann::json;
    json dtypes = json::array();
    for (const auto& d : e.by_dtype)
        dtypes.push_back({{"dtype", d.dtype},
                          {"parameters_bytes", d.parameters_bytes},
                          {"gradients_bytes", d.gradients_bytes},
                          {"optimizer_state_bytes", d.optimizer_state_bytes}});
    json probes = json::array();
    for (const auto& p : e.probes)
        probes.push_back({{"batch_size", p.batch_size}, {"activation_bytes", p.activation_bytes}});
    json j{{"ok", e.ok},
           {"device", e.device},
           {"model", e.model},
           {"batch_size", e.batch_size},
           {"accumulation_steps", e.accumulation_steps},
           {"effective_batch", e.effective_batch},
           {"gradient_checkpointing", e.gradient_checkpointing},
           {"by_dtype", dtypes},
           {"parameters_bytes", e.parameters_bytes},
           {"frozen_parameters_bytes", e.frozen_parameters_bytes},
           {"gradients_bytes", e.gradients_bytes},
           {"optimizer_state_bytes", e.optimizer_state_bytes},
           {"step_temporary_bytes", e.step_temporary_bytes},
           {"probes", probes},
           {"activations", {{"fixed_bytes", e.activation_fixed_bytes}, {"per_sample_bytes", e.activation_per_sample_bytes}}},
           {"activation_bytes", e.activation_bytes},
           {"predicted_peak_bytes", e.predicted_peak_bytes},
           {"returned_gradient_bytes", e.returned_gradient_bytes},
           {"process_overhead_bytes", e.process_overhead_bytes},
           {"save_bytes", e.save_bytes},
           {"process_bytes", e.process_bytes},
           {"seconds", e.seconds}};
    if (!e.ok) j["error"] = e.error;
    return j.dump(2) + "\n";
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later

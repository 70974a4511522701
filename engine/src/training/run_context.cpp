#include "training/run_context.h"

#include <cmath>
#include <cstdio>
#include <optional>
#include <sstream>
#include <thread>

#include <torch/cuda.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>
#include <torch/utils.h>

#include "accum/errors.h"
#include "memory/counting_allocator.h"
#include "memory/cuda_memory.h"
#include "training/checkpoint.h"
#include "training/evaluation.h"

#include <nlohmann/json.hpp>

namespace accum {

namespace {

// The value of a 0-dim float tensor on the CPU, read where it lies (item() goes
// through the dispatcher, about 2 µs a call); nothing for any other tensor.
std::optional<double> cpu_scalar(const torch::Tensor& t) {
    if (t.device().is_cpu() && t.dim() == 0 && t.scalar_type() == torch::kFloat) return *t.data_ptr<float>();
    return std::nullopt;
}

torch::Device resolve_device(const std::string& name) {
    if (name == "cpu") return torch::kCPU;
    const bool have_cuda = torch::cuda::is_available();
    if (name == "auto") return have_cuda ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
    if (!have_cuda)
        throw ConfigError("--device: " + name + " was asked for, but " +
                          (memory::cuda_compiled() ? std::string("no CUDA device is available")
                                                   : std::string("this build's LibTorch has no CUDA")) +
                          "; use --device cpu or auto");
    int index = 0;
    if (name.size() > 5) index = std::stoi(name.substr(5));
    if (index >= static_cast<int>(torch::cuda::device_count()))
        throw ConfigError("--device: " + name + " does not exist (" + std::to_string(torch::cuda::device_count()) +
                          " CUDA devices)");
    return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
}

std::string fixed(double v, int precision) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", precision, v);
    return buf;
}

} // namespace

double gradient_norm(const std::vector<torch::Tensor>& parameters) {
    std::vector<torch::Tensor> norms;
    for (const auto& p : parameters)
        if (p.grad().defined()) norms.push_back(p.grad().norm(2));
    if (norms.empty()) return 0.0;
    return torch::stack(norms).norm(2).item<double>();
}

void zero_grad(torch::optim::Optimizer& optimizer) {
    for (auto& group : optimizer.param_groups())
        for (auto& p : group.params())
            if (p.grad().defined()) p.mutable_grad().reset();
}

RunContext::RunContext(const RunConfig& cfg, Sink& s, RunControl& c)
    : config(cfg), sink(s), control(c), device(resolve_device(cfg.device)) {
    build();
}

RunContext::~RunContext() = default;

void RunContext::build() {
    budget_bytes_ = parse_byte_size(config.memory_budget).value_or(0);
    data = load_dataset(config);
    if (data.train.size() == 0) throw DataError(config.dataset + ": the training split is empty");
    train_loader = std::make_unique<DataLoader>(data.train, config.batch_size, config.shuffle, config.seed);
    eval_loader = std::make_unique<DataLoader>(data.eval, config.batch_size, /*shuffle=*/false, config.seed);

    torch::manual_seed(config.seed);
    model = make_model(config, data.train);
    model->to(device);

    if (config.optimizer == "adamw") {
        optimizer = std::make_unique<torch::optim::AdamW>(
            model->parameters(), torch::optim::AdamWOptions(config.learning_rate).weight_decay(config.weight_decay));
    } else {
        optimizer = std::make_unique<torch::optim::SGD>(model->parameters(), torch::optim::SGDOptions(config.learning_rate)
                                                                                .momentum(config.momentum)
                                                                                .weight_decay(config.weight_decay));
    }

    if (config.batch_size > data.train.size())
        throw ConfigError("--batch-size: " + std::to_string(config.batch_size) + " is larger than the " +
                          std::to_string(data.train.size()) + " training samples of " + config.dataset +
                          "; use at most " + std::to_string(data.train.size()));

    // Length of the run, counted in optimizer steps: ceil(L / K) per epoch
    // (the last partial window of an epoch is flushed, not carried over).
    const std::int64_t per_epoch = updates_per_epoch();
    if (config.max_steps > 0) {
        total_updates_ = config.max_steps;
        num_epochs_ = (config.max_steps + per_epoch - 1) / per_epoch;
    } else {
        num_epochs_ = config.epochs;
        total_updates_ = config.epochs * per_epoch;
    }
    lr_scheduler = std::make_unique<LrScheduler>(*optimizer, config.scheduler, config.warmup_steps, total_updates_);
    start_ = last_memory_record_ = std::chrono::steady_clock::now();
    if (config.accumulation_steps > micro_batches_per_epoch())
        log("note: --accumulation-steps " + std::to_string(config.accumulation_steps) + " is more than the " +
            std::to_string(micro_batches_per_epoch()) + " micro-batches of an epoch; each epoch is one window of " +
            std::to_string(micro_batches_per_epoch()) + " micro-batches, flushed at its end");
}

std::int64_t RunContext::updates_per_epoch() const {
    const std::int64_t k = config.accumulation_steps;
    return (micro_batches_per_epoch() + k - 1) / k;
}

double RunContext::elapsed_s() const {
    return progress.elapsed_before_s +
           std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

double RunContext::fractional_epoch(std::int64_t done_in_epoch) const {
    return static_cast<double>(progress.epoch) +
           static_cast<double>(done_in_epoch) / static_cast<double>(micro_batches_per_epoch());
}

void RunContext::begin_epoch(std::int64_t epoch) {
    progress.epoch = epoch;
    train_loader->set_epoch(epoch);
    model->train();
}

std::int64_t RunContext::current_memory_bytes() const {
    if (device.is_cuda()) return memory::cuda_stats(device.index()).allocated;
    return memory::cpu_counters().current;
}

std::int64_t RunContext::run_peak_memory_bytes() const {
    if (device.is_cuda()) return memory::cuda_stats(device.index()).peak_allocated;
    return memory::cpu_counters().peak;
}

std::int64_t RunContext::step_peak_and_reset() {
    if (device.is_cuda()) {
        const auto peak = memory::cuda_stats(device.index()).peak_allocated;
        memory::cuda_reset_peak(device.index());
        return peak;
    }
    const auto peak = memory::cpu_counters().window_peak;
    memory::reset_window_peak();
    return peak;
}

void RunContext::emit_memory_record() {
    MemoryRecord r;
    r.elapsed_s = elapsed_s();
    r.budget_bytes = budget_bytes_;
    r.rss_bytes = memory::process_rss_bytes();
    if (device.is_cuda()) {
        const auto s = memory::cuda_stats(device.index());
        r.cuda = true;
        r.memory_bytes = s.allocated;
        r.peak_memory_bytes = s.peak_allocated;
        r.reserved_bytes = s.reserved;
    } else {
        const auto c = memory::cpu_counters();
        r.memory_bytes = c.current;
        r.peak_memory_bytes = c.peak;
    }
    sink.on_memory(r);
    last_memory_record_ = std::chrono::steady_clock::now();
}

bool RunContext::proceed() {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_memory_record_ >= std::chrono::milliseconds(250)) emit_memory_record();
    return control.proceed();
}

void RunContext::after_backward(const ModelOutput& outputs, const Batch& batch, int window_index, int window_size,
                                bool sync) {
    ++progress.micro_steps;
    progress.samples_seen += batch.size;
    // The window's loss: token losses over the window's tokens, or the mean of the
    // micro-batch means. On the CPU the value is read where it lies (a tensor add
    // and a detach cost each micro-batch about 5 µs); on a GPU one tensor add, no
    // synchronisation until the step.
    const auto& part = uses_token_normalization() ? outputs.loss_sum : outputs.loss;
    if (const auto value = cpu_scalar(part))
        window_total_cpu_ += *value;
    else
        window_total_ = window_total_.defined() ? window_total_ + part.detach() : part.detach();
    window_divisor_ += uses_token_normalization() ? batch.num_items : 1;

    if (config.record_micro_steps) {
        MicroStepRecord r;
        r.micro_step = progress.micro_steps;
        r.step = progress.global_step;
        r.window_index = window_index;
        r.window_size = window_size;
        r.sync = sync;
        const auto loss = cpu_scalar(outputs.loss);
        r.loss = loss ? *loss : outputs.loss.item<double>();
        // The norm costs a pass over every gradient: only at teaching pace (or while
        // stepping by hand), where a person watches the accumulation meter.
        r.grad_norm = config.micro_step_delay_s > 0 || control.paused() ? gradient_norm(model->parameters())
                                                                         : std::nan("");
        r.epoch = fractional_epoch(progress.next_index + window_index); // next_index: where the window began
        sink.on_micro_step(r);
    }
    if (config.micro_step_delay_s > 0)
        std::this_thread::sleep_for(std::chrono::duration<double>(config.micro_step_delay_s));
}

WindowUpdate RunContext::before_optimizer_step() {
    WindowUpdate u;
    if (window_divisor_ > 0)
        u.loss = (window_total_cpu_ + (window_total_.defined() ? window_total_.item<double>() : 0.0)) /
                 static_cast<double>(window_divisor_);
    const auto params = model->parameters();
    if (config.max_grad_norm > 0)
        u.grad_norm = torch::nn::utils::clip_grad_norm_(params, config.max_grad_norm);
    else
        u.grad_norm = gradient_norm(params);
    u.learning_rate = lr_scheduler->current_lr();
    if ((!std::isfinite(u.loss) || !std::isfinite(u.grad_norm)) && config.skip_nonfinite) {
        u.skip = true;
        ++skipped_updates;
        zero_grad(*optimizer);
        log("skipped optimizer step " + std::to_string(progress.global_step + 1) + ": non-finite loss or gradient "
            "(--skip-nonfinite); the weights stay as they were");
    } else if (!std::isfinite(u.loss) || !std::isfinite(u.grad_norm)) {
        throw DivergedError("the loss became " + std::string(std::isfinite(u.loss) ? "finite but the gradient norm " : "") +
                            "non-finite at optimizer step " + std::to_string(progress.global_step + 1) +
                            " (loss " + (std::isnan(u.loss) ? std::string("nan") : std::to_string(u.loss)) + ", gradient norm " +
                            (std::isnan(u.grad_norm) ? std::string("nan") : std::to_string(u.grad_norm)) +
                            "); the weights were left at step " + std::to_string(progress.global_step) +
                            ". Lower --lr or set --max-grad-norm");
    }
    window_total_ = torch::Tensor();
    window_total_cpu_ = 0.0;
    window_divisor_ = 0;
    return u;
}

void RunContext::after_optimizer_step(const WindowUpdate& update, std::int64_t done_in_epoch) {
    ++progress.global_step;
    progress.next_index = done_in_epoch;
    progress.micro_steps_at_step = progress.micro_steps;
    progress.samples_at_step = progress.samples_seen;
    progress.last_loss = update.loss;
    train_loss_sum += update.loss;
    loss_log_sum_ += update.loss;
    ++loss_log_count_;

    StepRecord r;
    r.step = progress.global_step;
    r.micro_step = progress.micro_steps;
    r.epoch = fractional_epoch(done_in_epoch);
    r.loss = update.loss;
    r.learning_rate = update.learning_rate;
    r.grad_norm = update.grad_norm;
    r.samples_seen = progress.samples_seen;
    r.elapsed_s = elapsed_s();
    r.memory_bytes = current_memory_bytes();
    r.peak_memory_bytes = step_peak_and_reset();
    sink.on_step(r);

    if (progress.global_step % config.logging_steps == 0 || reached_max_steps()) {
        if (log_format == LogFormat::TrainerDict) {
            const double loss = loss_since_last_log();
            log_history.push_back(nlohmann::json{{"loss", loss}, {"grad_norm", update.grad_norm},
                                                 {"learning_rate", update.learning_rate}, {"epoch", r.epoch},
                                                 {"step", r.step}}.dump());
            log("{'loss': " + fixed(loss, 4) + ", 'grad_norm': " + fixed(update.grad_norm, 4) +
                ", 'learning_rate': " + fixed(update.learning_rate, 6) + ", 'epoch': " + fixed(r.epoch, 2) + "}");
        } else {
            log(plain_step_line(r));
            loss_since_last_log();
        }
    }
    if (config.eval_strategy == "steps" && config.eval_steps > 0 && progress.global_step % config.eval_steps == 0)
        evaluate();
    maybe_save(false);
}

void RunContext::maybe_save(bool epoch_end) {
    if (config.output_dir.empty() || config.save_strategy == "no") return;
    const bool due = epoch_end ? config.save_strategy == "epoch"
                               : config.save_strategy == "steps" && progress.global_step % config.save_steps == 0;
    if (due) save_now();
}

std::string RunContext::save_now() {
    return save_checkpoint(*this, config.output_dir, log_history, best_metric, static_cast<int>(config.save_total_limit));
}

double RunContext::loss_since_last_log() {
    const double mean = loss_log_count_ ? loss_log_sum_ / static_cast<double>(loss_log_count_) : std::nan("");
    loss_log_sum_ = 0;
    loss_log_count_ = 0;
    return mean;
}

std::string RunContext::plain_step_line(const StepRecord& r) {
    const double dt = r.elapsed_s - time_at_last_log_;
    const double rate = dt > 0 ? static_cast<double>(r.samples_seen - samples_at_last_log_) / dt : 0.0;
    samples_at_last_log_ = r.samples_seen;
    time_at_last_log_ = r.elapsed_s;
    std::ostringstream line;
    line << "step " << r.step << "/" << total_updates_ << "  epoch " << fixed(r.epoch, 2) << "  loss "
         << fixed(r.loss, 4) << "  lr " << r.learning_rate << "  grad_norm " << fixed(r.grad_norm, 3) << "  "
         << fixed(rate, 0) << " samples/s  mem " << format_byte_size(r.peak_memory_bytes);
    return line.str();
}

void RunContext::end_epoch() {
    progress.next_index = micro_batches_per_epoch();
    if (config.eval_strategy == "epoch") evaluate();
    ++progress.epoch;
    progress.next_index = 0;
    maybe_save(true);
}

void RunContext::final_evaluation_if_missed() {
    if (config.eval_strategy != "no" && last_eval_step_ != progress.global_step && progress.global_step > 0) evaluate();
}

EvalRecord RunContext::evaluate() {
    last_eval_step_ = progress.global_step;
    const auto result = evaluate_model(*model, *eval_loader, device);
    EvalRecord r;
    r.step = progress.global_step;
    r.epoch = fractional_epoch(progress.next_index);
    r.eval_loss = result.loss;
    r.eval_accuracy = result.metrics.accuracy;
    r.eval_f1 = result.metrics.f1;
    sink.on_eval(r);
    if (!(best_metric <= r.eval_loss)) best_metric = r.eval_loss;
    log_history.push_back(nlohmann::json{{"eval_loss", r.eval_loss}, {"eval_accuracy", r.eval_accuracy},
                                         {"eval_f1", r.eval_f1}, {"epoch", r.epoch}, {"step", r.step}}.dump());
    if (log_format == LogFormat::TrainerDict) {
        log("{'epoch': " + fixed(r.epoch, r.epoch == std::floor(r.epoch) ? 1 : 2) + ", 'eval_loss': " +
            fixed(r.eval_loss, 4) + ", 'eval_accuracy': " + fixed(r.eval_accuracy, 4) + ", 'eval_f1': " +
            fixed(r.eval_f1, 4) + "}");
    } else {
        log("eval  epoch " + fixed(r.epoch, 2) + "  step " + std::to_string(r.step) + "  eval_loss " +
            fixed(r.eval_loss, 4) + "  eval_accuracy " + fixed(r.eval_accuracy, 4) + "  eval_f1 " +
            fixed(r.eval_f1, 4));
    }
    return r;
}

void RunContext::log(const std::string& line) { sink.on_log(line); }

} // namespace accum

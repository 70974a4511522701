#include "training/run_context.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <ostream>
#include <optional>
#include <thread>

#include <torch/utils.h>

#include <ATen/CPUGeneratorImpl.h>

#include "accum/engine_messages.h"
#include "accum/errors.h"
#include "checked_file.h"
#include "distributed/data_parallel.h"
#include "distributed/rank_agreement.h"
#include "memory/counting_allocator.h"
#include "memory/cuda_memory.h"
#include "models/script_model.h"
#include "models/pt2_model.h"
#include "switches.h"
#include "training/evaluation.h"
#include "training/mixed_precision.h"
#include "training/python_format.h"
#include "training/tensor_files.h"

namespace accum {

namespace {

// The value of a 0-dim float tensor on the CPU, read where it lies (item() goes
// through the dispatcher, once per micro-batch); nothing for any other tensor.
std::optional<double> cpu_scalar(const torch::Tensor& t) {
    if (t.device().is_cpu() && t.dim() == 0 && t.scalar_type() == torch::kFloat) return *t.data_ptr<float>();
    return std::nullopt;
}

double value_of(const torch::Tensor& t) {
    const auto value = cpu_scalar(t);
    return value ? *value : t.item<double>();
}

// The options every rank must share: all but where files go, what is printed,
// where the data lie on each machine, and how the ranks met.
std::string shared_options(const RunConfig& config) {
    RunConfig c = config;
    c.output_dir.clear();
    c.overwrite_output_dir = false;
    c.metrics_file.clear();
    c.quiet = false;
    c.record_micro_steps = false;
    c.micro_step_delay_s = 0;
    c.data_path.clear();
    c.threads = 0;
    c.node_rank = 0;
    c.master_addr.clear();
    c.master_port = 0;
    return to_json_text(c);
}

// A loss or gradient norm as the diverged message writes it ("nan" for NaN).
std::string number_text(double v) { return std::isnan(v) ? std::string("nan") : std::to_string(v); }

} // namespace

RunContext::RunContext(const RunConfig& cfg, Sink& s, RunControl& c)
    : config_(cfg), sink_(s), control_(c), log_(make_plain_log(cfg.logging_steps)) {
    budget_bytes_ = parse_byte_size(config_.memory_budget).value_or(0);
    writes_checkpoints_ = !config_.output_dir.empty();
    auto* state = dist::default_state();
    const bool several = state && state->world_size() > 1;
    parts_ = build_run_parts(config_, several ? ShardOf{state->rank(), state->world_size()} : ShardOf{});
    // The ranks check that they run the same configuration, learn whether rank 0
    // writes checkpoints (every rank takes part in saving one), and start from
    // rank 0's weights and buffers, as DDP's constructor broadcasts them.
    if (several) {
        dist::RankHooks hooks;
        hooks.window_with = [this](const dist::MicroBatchPart& current) {
            const double total = window_total() + value_of(window_part(current.loss, current.loss_sum));
            return std::pair<double, double>(total,
                                             static_cast<double>(window_divisor_ + window_count(current.items)));
        };
        hooks.memory_now = [this] { return memory_record(); };
        hooks.stop_requested = [this] { return control_.stop_requested(); };
        hooks.paused = [this] { return control_.paused(); };
        hooks.take_step = [this] { return control_.take_step(); };
        hooks.while_waiting = [this] {
            control_.note_held();
            if (std::chrono::steady_clock::now() - last_memory_record_ >= std::chrono::milliseconds(250))
                emit_memory_record();
        };
        ranks_ = std::make_unique<dist::RankAgreement>(*state, std::move(hooks));
        std::vector<torch::Tensor> model_state;
        for (const auto& p : model().parameters()) model_state.push_back(p);
        for (const auto& b : model().buffers()) model_state.push_back(b);
        writes_checkpoints_ = ranks_->join(shared_options(config_), writes_checkpoints_, model_state);
    }
    start_ = last_memory_record_ = std::chrono::steady_clock::now();
    if (config_.accumulation_steps > micro_batches_per_epoch())
        log("note: --accumulation-steps " + std::to_string(config_.accumulation_steps) + " is more than the " +
            std::to_string(micro_batches_per_epoch()) + " micro-batches of an epoch; each epoch is one window of " +
            std::to_string(micro_batches_per_epoch()) + " micro-batches, flushed at its end");
    // What the engine made of a user's module: which data feed its forward, what it returns.
    if (config_.model == ModelKind::File && is_main_process()) log("model: " + model().describe());
    if (is_main_process()) {
        for (const auto& note : data().notes) log("data: " + note);
        for (const auto& note : model().feeding_notes()) log("data: " + note);
        if (config_.model != ModelKind::File && data().train.token_type_ids.defined())
            log("data: the data's token_type_ids are not fed: the built-in " + to_string(config_.model) +
                " takes none");
    }
    // ACCUM_NOISE_SCALE=0 leaves the noise scale unmeasured (bench/NOISE_SCALE.md's reference).
    static const bool noise_scale_off = switched_off("ACCUM_NOISE_SCALE");
    noise_ = std::make_unique<NoiseScaleMeter>(config_, world_size(), is_main_process() && !noise_scale_off);
    start_threads();
}

void RunContext::start_threads() {
    threads_default_ = threads_now_ = applied_threads();
    const int most = threads();
    const auto pools = [](const ComputeThreads& t) {
        return std::to_string(std::max(t.intra_op, t.blas)) + " (LibTorch's pool " + std::to_string(t.intra_op) +
               ", BLAS " + std::to_string(t.blas) + ")";
    };
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    // ACCUM_ADAPTIVE_THREADS=0 keeps the default count for the whole run, as
    // --threads does: the tests, which compare runs' losses, set it (a count
    // changed mid-run changes the order of sums, and hundreds of steps later
    // the losses), since their neighbours in a parallel test run are load.
    static const bool adaptive_off = switched_off("ACCUM_ADAPTIVE_THREADS");
    const bool tunable = config_.threads == 0 && device().is_cpu() && world_size() == 1 &&
                         config_.micro_step_delay_s <= 0 && most > 1 && !adaptive_off;
    const bool adapts = tunable && !config_.keep_threads;
    std::string reason = "threads: " + pools(threads_now_);
    if (config_.threads > 0) {
        reason += ", as --threads " + std::to_string(config_.threads) + " asks";
    } else {
        reason += ", the default for this model on " + std::to_string(cores) + (cores == 1 ? " core" : " cores");
        if (world_size() > 1) reason += " shared by this machine's processes";
        if (adapts) reason += "; fewer while other programs take cores and fewer run faster";
        else if (tunable) reason += ", kept to the end: the compared runs add in one order";
    }
    if (is_main_process()) log(reason);
    if (!adapts) return;
    std::vector<int> counts;
    for (int k = most; k >= 1; --k) counts.push_back(k);
    tuner_.emplace(std::move(counts));
    mark_step_start();
}

void RunContext::mark_step_start() {
    if (!tuner_) return;
    step_start_ = std::chrono::steady_clock::now();
    samples_at_step_start_ = progress_.samples_seen;
}

void RunContext::adapt_threads() {
    if (!tuner_) return;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - step_start_).count();
    // Read at most every 20 ms; between readings the step's load is unknown (NaN), the tuner weighs the known ones.
    const double other = other_load_.take(0.02);
    if (const auto decision = tuner_->observe(seconds, progress_.samples_seen - samples_at_step_start_, other))
        log(decision->reason());
    const int k = tuner_->threads();
    if (k == threads()) return;
    threads_now_ = {std::min(threads_default_.intra_op, k), std::min(threads_default_.blas, k)};
    apply_threads(threads_now_);
}

RunContext::~RunContext() = default;

int RunContext::rank() const { return ranks_ ? ranks_->rank() : 0; }
int RunContext::world_size() const { return ranks_ ? ranks_->world_size() : 1; }
bool RunContext::stopped() const { return ranks_ ? ranks_->stop_agreed() : control_.stop_requested(); }

void RunContext::set_log(std::unique_ptr<RunLog> log) { log_ = std::move(log); }

double RunContext::elapsed_s() const {
    return progress_.elapsed_before_s +
           std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

double RunContext::fractional_epoch(std::int64_t done_in_epoch) const {
    return static_cast<double>(progress_.epoch) +
           static_cast<double>(done_in_epoch) / static_cast<double>(micro_batches_per_epoch());
}

void RunContext::start_counting_memory(std::int64_t budget) {
    if (device().is_cuda()) {
        // Every run sets the fraction: a budget from an earlier run in this process
        // (the studio) must not stay in force.
        const auto total = memory::cuda_stats(device().index()).device_total;
        const double fraction = budget > 0 && total > 0 ? std::min(1.0, static_cast<double>(budget) / total) : 1.0;
        memory::cuda_set_memory_fraction(fraction, device().index());
        memory::cuda_reset_peak(device().index());
    } else {
        memory::set_cpu_budget(budget);
        memory::reset_run_peak();
    }
    torch::NoGradGuard guard;
    for (auto& p : model().parameters()) p.set_data(p.clone());
}

std::int64_t RunContext::current_memory_bytes() const {
    if (device().is_cuda()) return memory::cuda_stats(device().index()).allocated;
    return memory::cpu_counters().current;
}

std::int64_t RunContext::run_peak_memory_bytes() const {
    // On CUDA the allocator's peak is reset at every reading (for the step's own peak), so the
    // run's is the largest of those and the one in progress.
    if (device().is_cuda()) return std::max(cuda_run_peak_, memory::cuda_stats(device().index()).peak_allocated);
    return memory::cpu_counters().peak;
}

std::int64_t RunContext::window_peak_and_reset() {
    if (device().is_cuda()) {
        const auto peak = memory::cuda_stats(device().index()).peak_allocated;
        memory::cuda_reset_peak(device().index());
        cuda_run_peak_ = std::max(cuda_run_peak_, peak);
        return peak;
    }
    const auto peak = memory::cpu_counters().window_peak;
    memory::reset_window_peak();
    return peak;
}

memory::StaticMemory RunContext::static_memory_now() const {
    return memory::static_memory(parts_->model->parameters(), &parts_->optimizer->impl(), device());
}

std::int64_t RunContext::window_peak_now() const {
    if (device().is_cuda()) return memory::cuda_stats(device().index()).peak_allocated;
    return memory::cpu_counters().window_peak;
}

MemoryRecord RunContext::memory_record() const {
    MemoryRecord r;
    r.elapsed_s = elapsed_s();
    r.budget_bytes = budget_bytes_;
    r.rss_bytes = memory::process_rss_bytes();
    if (device().is_cuda()) {
        const auto s = memory::cuda_stats(device().index());
        r.cuda = true;
        r.memory_bytes = s.allocated;
        r.peak_memory_bytes = std::max(cuda_run_peak_, s.peak_allocated);
        r.reserved_bytes = s.reserved;
    } else {
        const auto c = memory::cpu_counters();
        r.memory_bytes = c.current;
        r.peak_memory_bytes = c.peak;
    }
    const auto fixed = static_memory_now();
    const auto categories = memory::categorize(fixed, r.memory_bytes);
    r.parameters_bytes = categories.parameters_bytes;
    r.frozen_parameters_bytes = categories.frozen_parameters_bytes;
    r.gradients_bytes = categories.gradients_bytes;
    r.optimizer_state_bytes = categories.optimizer_state_bytes;
    r.activations_bytes = categories.activations_bytes;
    // The peak since the previous record: the meter's readings, and what the
    // allocator saw since its last reading (with the static part now). A record
    // made by emit_memory_record has just read it; the ranks' figures between
    // records (memory_now) have not.
    auto peak = peak_meter_.interval();
    if (const auto unread = window_peak_now(); unread > peak.peak_bytes) peak = memory::compose_peak(unread, fixed);
    r.interval_peak_bytes = peak.peak_bytes;
    r.peak_parameters_bytes = peak.parameters_bytes;
    r.peak_gradients_bytes = peak.gradients_bytes;
    r.peak_optimizer_state_bytes = peak.optimizer_state_bytes;
    r.peak_activations_bytes = peak.activations_bytes;
    r.peak_optimizer_step_bytes = peak.optimizer_step_bytes;
    r.rank = rank();
    return r;
}

void RunContext::emit_memory_record() {
    // The allocator's peak since its last reading counts for the step and this record; the next starts anew.
    peak_meter_.at_record(window_peak_and_reset(), static_memory_now());
    const MemoryRecord r = memory_record();
    peak_meter_.take_interval();
    sink_.on_memory(r);
    if (ranks_) {
        ranks_->set_own_memory(r);
        if (is_main_process())
            for (auto other : ranks_->other_ranks_memory()) {
                other.elapsed_s = r.elapsed_s;
                sink_.on_memory(other);
            }
    }
    last_memory_record_ = std::chrono::steady_clock::now();
}

bool RunContext::proceed() {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_memory_record_ >= std::chrono::milliseconds(250)) emit_memory_record();
    if (ranks_) return ranks_->proceed();
    return control_.proceed();
}

void RunContext::micro_batch_done(const ModelOutput& outputs, const Batch& batch, std::int64_t index, bool sync) {
    // The peak since the last reading (loading the batch, forward, backward) less
    // the static part now, the largest it was (gradients are made in backward).
    // Parameters, gradients and optimizer state are the same after every backward
    // of a window (its first makes the gradients): read once per window.
    if (!window_static_) window_static_ = static_memory_now();
    peak_meter_.after_backward(window_peak_and_reset(), *window_static_);
    held_bytes_ = 0;
    for (const auto* t : {&batch.input_ids, &batch.attention_mask, &batch.token_type_ids, &batch.labels,
                          &outputs.logits})
        if (t->defined() && t->device() == device()) held_bytes_ += memory::allocator_bytes(t->nbytes(), device());
    ++progress_.micro_steps;
    progress_.samples_seen += batch.size * world_size(); // every rank's micro-batch (shards have equal lengths)
    // The window's loss: token losses over the window's tokens, or the mean of the
    // micro-batch means. On the CPU the value is read where it lies (no tensor add
    // and detach each micro-batch); on a GPU one tensor add, no synchronisation
    // until the step.
    const auto& part = window_part(outputs.loss, outputs.loss_sum);
    if (const auto value = cpu_scalar(part))
        window_total_cpu_ += *value;
    else
        window_total_ = window_total_.defined() ? window_total_ + part.detach() : part.detach();
    window_divisor_ += window_count(batch.num_items);
    noise_->after_backward(parts_->model->parameters(), batch, index, train_loader(),
                           scaler().is_enabled() ? scaler().get_scale() : 1.0, sync);

    if (config_.record_micro_steps) {
        const std::int64_t k = config_.accumulation_steps;
        const std::int64_t window_start = index - index % k;
        MicroStepRecord r;
        r.micro_step = progress_.micro_steps;
        r.step = progress_.global_step;
        r.window_index = static_cast<int>(index - window_start + 1);
        r.window_size = static_cast<int>(std::min(window_start + k, micro_batches_per_epoch()) - window_start);
        r.sync = sync;
        r.loss = value_of(outputs.loss);
        // The norm costs a pass over every gradient: only at teaching pace (or while
        // stepping by hand), where a person watches the accumulation meter.
        r.grad_norm = config_.micro_step_delay_s > 0 || control_.paused()
                          ? clip_grad_norm_(parts_->model->parameters(), 0)
                          : std::nan("");
        r.epoch = fractional_epoch(index + 1);
        if (ranks_) r.grad_allreduces = ranks_->allreduces_since_last_asked();
        r.autocast = config_.mixed_precision != MixedPrecision::No;
        r.loss_scale = scaler().is_enabled() ? scaler().get_scale() : 0.0;
        sink_.on_micro_step(r);
    }
    if (config_.micro_step_delay_s > 0)
        std::this_thread::sleep_for(std::chrono::duration<double>(config_.micro_step_delay_s));
}

double RunContext::window_total() const {
    return window_total_cpu_ + (window_total_.defined() ? window_total_.item<double>() : 0.0);
}

double RunContext::close_window() {
    double loss = window_divisor_ > 0 ? window_total() / static_cast<double>(window_divisor_) : 0.0;
    // Several processes: the mean over every rank's micro-batches, summed at the window's gradient sync.
    if (ranks_)
        if (const auto agreed = ranks_->take_window_loss()) loss = *agreed;
    window_total_ = torch::Tensor();
    window_total_cpu_ = 0.0;
    window_divisor_ = 0;
    return loss;
}

bool RunContext::judge_window(double loss, double grad_norm) {
    // Below fp16's smallest number: a scale no overflow asks for.
    constexpr double kSmallestLossScale = 0x1p-24;
    const bool overflow = scaler().is_enabled() && scaler().get_scale() >= kSmallestLossScale;
    if (std::isfinite(loss) && (std::isfinite(grad_norm) || overflow)) return true;
    if (!config_.skip_nonfinite)
        throw DivergedError(make_message(message_code::diverged,
                                         {{"step", std::to_string(progress_.global_step + 1)},
                                          {"good_step", std::to_string(progress_.global_step)},
                                          {"loss", number_text(loss)},
                                          {"grad_norm", number_text(grad_norm)},
                                          {"gradient_only", std::isfinite(loss) ? "yes" : ""}}));
    return false;
}

bool RunContext::end_window(double grad_norm) {
    window_loss_ = close_window();
    window_grad_norm_ = grad_norm;
    window_learning_rate_ = lr_scheduler().current_lr();
    window_skipped_ = !judge_window(window_loss_, grad_norm);
    if (window_skipped_) {
        ++skipped_updates_;
        log("skipped optimizer step " + std::to_string(progress_.global_step + 1) +
            ": non-finite loss or gradient (--skip-nonfinite); the weights stay as they were");
    }
    return !window_skipped_;
}

void RunContext::optimizer_step_done(std::int64_t done_in_epoch) {
    ++progress_.global_step;
    progress_.next_index = done_in_epoch;
    progress_.micro_steps_at_step = progress_.micro_steps;
    progress_.samples_at_step = progress_.samples_seen;
    progress_.last_loss = window_loss_;
    adapt_threads();

    StepRecord r;
    r.step = progress_.global_step;
    r.micro_step = progress_.micro_steps;
    r.epoch = fractional_epoch(done_in_epoch);
    r.loss = window_loss_;
    r.learning_rate = window_learning_rate_;
    r.grad_norm = window_grad_norm_;
    r.samples_seen = progress_.samples_seen;
    r.elapsed_s = elapsed_s();
    r.memory_bytes = current_memory_bytes();
    // Clipping, the optimizer step and zero_grad since the last backward.
    peak_meter_.after_step(window_peak_and_reset(), static_memory_now(), held_bytes_);
    window_static_.reset(); // the step made optimizer state; zero_grad may free the gradients
    const auto peak = peak_meter_.take_step();
    r.peak_memory_bytes = peak.peak_bytes;
    r.peak_activations_bytes = peak.peak_activations_bytes;
    r.peak_optimizer_step_bytes = peak.peak_optimizer_step_bytes;
    if (ranks_) {
        const auto c = ranks_->take_window_counters();
        r.grad_allreduces = c.calls;
        r.allreduce_seconds = c.seconds;
        r.allreduce_bytes = c.bytes;
    }
    r.loss_scale = scaler().window_scale();
    r.skipped = window_skipped_ || scaler().window_skipped();
    r.threads = threads();
    noise_->window_done(window_grad_norm_, r);
    if (scaler().window_skipped()) {
        ++overflow_skips_;
        log("skipped optimizer step " + std::to_string(r.step) + ": the loss scaler found inf/NaN gradients at scale " +
            python_float(r.loss_scale) + "; the weights and the schedule stay, the scale is now " +
            python_float(scaler().get_scale()));
    }
    sink_.on_step(r);
    if (const auto line = log_->on_step(r, StepPosition{total_updates(), reached_max_steps()})) log(*line);

    // In the Trainer's order: DefaultFlowCallback.on_step_end decides, then
    // _maybe_log_save_evaluate evaluates and then saves. At the run's last step a
    // steps strategy evaluates (unless it just did) and saves; an epoch strategy
    // waits for the epoch's end, which --max-steps inside an epoch brings here (the
    // Trainer's loop breaks to on_epoch_end): so with --eval-strategy epoch and
    // --save-strategy steps the last checkpoint is written before the last evaluation,
    // as the Trainer writes it (tests/peers compares their log_history).
    const bool last = reached_max_steps();
    if (config_.eval_strategy == Strategy::Steps && last_eval_step_ != progress_.global_step &&
        (progress_.global_step % config_.eval_steps == 0 || last))
        evaluate();
    if (checkpoint_due(false) || (last && config_.save_strategy == Strategy::Steps)) save_checkpoint();
    if (max_steps_reached_mid_epoch()) {
        if (config_.eval_strategy == Strategy::Epoch && last_eval_step_ != progress_.global_step) evaluate();
        if (config_.save_strategy == Strategy::Epoch) save_checkpoint();
    }
    mark_step_start();
}

bool RunContext::max_steps_reached_mid_epoch() const {
    return reached_max_steps() && progress_.next_index < micro_batches_per_epoch();
}

void RunContext::epoch_done() {
    progress_.next_index = micro_batches_per_epoch();
    const bool last = progress_.epoch + 1 >= num_epochs() || reached_max_steps();
    if (config_.eval_strategy == Strategy::Epoch || (last && config_.eval_strategy != Strategy::No &&
                                                     last_eval_step_ != progress_.global_step))
        evaluate();
    const bool save = checkpoint_due(true) || (last && config_.save_strategy != Strategy::No);
    ++progress_.epoch;
    progress_.next_index = 0;
    if (save) save_checkpoint();
    mark_step_start();
}

bool RunContext::checkpoint_due(bool epoch_end) const {
    if (!writes_checkpoints_) return false;
    if (epoch_end) return config_.save_strategy == Strategy::Epoch;
    return config_.save_strategy == Strategy::Steps && progress_.global_step % config_.save_steps == 0;
}

std::vector<torch::Tensor> RunContext::rng_states() {
    auto gen = at::detail::getDefaultCPUGenerator();
    torch::Tensor mine;
    {
        std::lock_guard<std::mutex> lock(gen.mutex());
        mine = gen.get_state();
    }
    if (!ranks_) return {mine};
    return ranks_->gather_rng_states(mine);
}

CheckpointParts RunContext::checkpoint_parts() {
    return CheckpointParts{model(), optimizer(), lr_scheduler(), scaler(), *log_, device()};
}

void RunContext::save_trained_module() {
    if (config_.output_dir.empty() || !is_main_process()) return;
    const auto dir = std::filesystem::path(config_.output_dir);
    const bool script = is_script_model(model());
    // A .pt2 package has no module to save again: its weights go out as the Hugging Face files below.
    if (!script && !is_pt2_package(config_.model_file)) return;
    if (script) {
        const auto path = (dir / kTrainedModuleFile).string();
        // Streamed: the module's tensors go from their own memory to the file.
        io::write_file_atomically(path, [this](const std::string& file, const std::string& shown) {
            io::FileWriter writer(file, shown);
            io::FileWriterBuf buffer(writer);
            std::ostream out(&buffer);
            save_torchscript(model(), out);
            writer.finish();
        });
        log("saved the trained module to " + path + " (torch.jit.load reads it)");
    }
    // With Hugging Face metadata: model.safetensors, config.json and the tokenizer's files, as the
    // Trainer's output has them (a LoRA module's adapter files instead of the first two: peft_export.h).
    const auto model_out = run_model_files(model(), config_);
    if (model_out.files.empty()) return;
    auto tensor_files = model_out.tensor_files;
    if (!model_out.tensors.empty()) tensor_files.emplace(tensor_files.begin(), "model.safetensors", model_out.tensors);
    for (const auto& [file, tensors] : tensor_files)
        io::write_file_atomically((dir / file).string(), [&](const std::string& tmp, const std::string& shown) {
            write_safetensors(tmp, shown, tensors);
        });
    for (const auto& [file, contents] : model_out.files) io::write_file_atomically((dir / file).string(), contents);
}

std::string RunContext::save_checkpoint() {
    if (!writes_checkpoints_ || config_.save_strategy == Strategy::No || progress_.global_step == 0) return {};
    const auto final_dir =
        (std::filesystem::path(config_.output_dir) / ("checkpoint-" + std::to_string(progress_.global_step))).string();
    if (last_saved_step_ == progress_.global_step) return final_dir;
    // Every rank's RNG state goes in; only rank 0 writes.
    const auto states = rng_states();
    if (!is_main_process()) {
        last_saved_step_ = progress_.global_step;
        return final_dir;
    }
    // A checkpoint is written whatever the budget (as a GPU run would write it from host memory);
    // the budget applies again to the training that follows.
    const auto budget = memory::cpu_counters().budget;
    memory::set_cpu_budget(0);
    struct RestoreBudget {
        std::int64_t bytes;
        ~RestoreBudget() { memory::set_cpu_budget(bytes); }
    } restore{budget};
    const CheckpointFacts facts{config_,      progress_,     elapsed_s(), fractional_epoch(progress_.next_index),
                                total_updates(), num_epochs(), world_size()};
    auto saved = accum::save_checkpoint(checkpoint_parts(), facts, config_.output_dir,
                                        static_cast<int>(config_.save_total_limit), states);
    last_saved_step_ = progress_.global_step;
    window_peak_and_reset(); // what saving held is not the next step's
    for (const auto& note : saved.notes) log("note: " + note);
    return saved.directory;
}

void RunContext::load_checkpoint(const std::string& dir) {
    const auto start = std::chrono::steady_clock::now();
    progress_ = accum::load_checkpoint(checkpoint_parts(), config_, rank(), world_size(), micro_batches_per_epoch(), dir);
    last_saved_step_ = progress_.global_step;
    window_peak_and_reset(); // reading the checkpoint is not the first step's
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
    log("resumed from " + dir + " at step " + std::to_string(progress_.global_step) + " (read in " +
        std::to_string(ms.count()) + " ms)");
}

EvalRecord RunContext::evaluate() {
    last_eval_step_ = progress_.global_step;
    if (!is_main_process()) { // rank 0 evaluates (the whole split); the others go on to the next sync
        EvalRecord none;
        none.step = progress_.global_step;
        none.eval_loss = none.eval_accuracy = none.eval_f1 = std::nan("");
        return none;
    }
    // In the run's precision, as Accelerate's prepared model and the Trainer evaluate.
    AutocastScope autocast(device().type(), config_.mixed_precision);
    const auto eval_start = std::chrono::steady_clock::now();
    const auto result = evaluate_model(model(), *parts_->eval_loader, device());
    const double eval_runtime = std::chrono::duration<double>(std::chrono::steady_clock::now() - eval_start).count();
    // Evaluation's memory is not the next step's activations; it is the memory
    // record's interval peak.
    peak_meter_.outside_steps(window_peak_and_reset(), static_memory_now());
    EvalRecord r;
    r.step = progress_.global_step;
    r.epoch = fractional_epoch(progress_.next_index);
    r.eval_loss = result.loss;
    r.eval_accuracy = result.metrics.accuracy;
    r.eval_f1 = result.metrics.f1;
    r.runtime_s = eval_runtime;
    r.samples = parts_->eval_loader->dataset().size();
    r.batches = parts_->eval_loader->size();
    sink_.on_eval(r);
    if (const auto line = log_->on_eval(r)) log(*line);
    return r;
}

void RunContext::log(const std::string& line) { sink_.on_log(line); }

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later

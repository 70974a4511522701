#include "training/run_context.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <sstream>
#include <thread>

#include <torch/cuda.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>
#include <torch/utils.h>

#include <ATen/CPUGeneratorImpl.h>

#include "accum/errors.h"
#include "distributed/data_parallel.h"
#include "memory/counting_allocator.h"
#include "memory/cuda_memory.h"
#include "training/checkpoint.h"
#include "training/evaluation.h"
#include "training/python_format.h"

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
        throw ConfigError(make_message(message_code::device_unavailable,
                                       {{"device", name}, {"no_cuda_build", memory::cuda_compiled() ? "" : "yes"}}));
    int index = 0;
    if (name.size() > 5) index = std::stoi(name.substr(5));
    if (index >= static_cast<int>(torch::cuda::device_count()))
        throw ConfigError(make_message(message_code::device_missing,
                                       {{"device", name}, {"count", std::to_string(torch::cuda::device_count())}}));
    return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
}

std::string fixed(double v, int precision) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", precision, v);
    return buf;
}

// The plain loop's lines: one per --logging-steps optimizer steps and at the last
// step, with the samples/s since the previous line.
class PlainLog final : public RunLog {
public:
    void on_step(RunContext& ctx, const StepRecord& r) override {
        if (r.step % ctx.config.logging_steps != 0 && !ctx.reached_max_steps()) return;
        const double dt = r.elapsed_s - time_at_last_line_;
        const double rate = dt > 0 ? static_cast<double>(r.samples_seen - samples_at_last_line_) / dt : 0.0;
        samples_at_last_line_ = r.samples_seen;
        time_at_last_line_ = r.elapsed_s;
        std::ostringstream line;
        line << "step " << r.step << "/" << ctx.total_updates() << "  epoch " << fixed(r.epoch, 2) << "  loss "
             << fixed(r.loss, 4) << "  lr " << r.learning_rate << "  grad_norm " << fixed(r.grad_norm, 3) << "  "
             << fixed(rate, 0) << " samples/s  mem " << format_byte_size(r.peak_memory_bytes);
        ctx.log(line.str());
    }
    void on_eval(RunContext& ctx, const EvalRecord& r) override {
        ctx.log("eval  epoch " + fixed(r.epoch, 2) + "  step " + std::to_string(r.step) + "  eval_loss " +
                fixed(r.eval_loss, 4) + "  eval_accuracy " + fixed(r.eval_accuracy, 4) + "  eval_f1 " +
                fixed(r.eval_f1, 4));
    }

private:
    std::int64_t samples_at_last_line_ = 0;
    double time_at_last_line_ = 0.0;
};

// A double as two floats whose sum is it (to float64 rounding of the pair): a
// sum over the ranks of such pairs keeps the precision float32 alone would lose.
void split(double x, float& hi, float& lo) {
    hi = static_cast<float>(x);
    lo = static_cast<float>(x - static_cast<double>(hi));
}

// A byte count as two floats that are exact whole numbers (MiB and the rest),
// so that a sum in float32 over the ranks' slots (one non-zero) stays exact.
void split_bytes(std::int64_t bytes, float& mib, float& rest) {
    bytes = std::max<std::int64_t>(0, bytes);
    mib = static_cast<float>(bytes >> 20);
    rest = static_cast<float>(bytes & ((std::int64_t{1} << 20) - 1));
}
std::int64_t join_bytes(float mib, float rest) {
    return (static_cast<std::int64_t>(mib) << 20) + static_cast<std::int64_t>(rest);
}

// The memory figures a rank sends with each gradient sync.
constexpr std::int64_t MemoryRecord::*kRankMemoryFields[] = {
    &MemoryRecord::memory_bytes,    &MemoryRecord::peak_memory_bytes,    &MemoryRecord::reserved_bytes,
    &MemoryRecord::rss_bytes,       &MemoryRecord::parameters_bytes,     &MemoryRecord::gradients_bytes,
    &MemoryRecord::optimizer_state_bytes, &MemoryRecord::activations_bytes,
};
constexpr std::size_t kMemoryFloats = 2 * std::size(kRankMemoryFields);

// FNV-1a: the same on every machine, unlike std::hash.
std::uint64_t fnv1a(const std::string& text) {
    std::uint64_t h = 1469598103934665603ull;
    for (const unsigned char c : text) h = (h ^ c) * 1099511628211ull;
    return h;
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

} // namespace

// What a run of several processes keeps beside the loop: the values that ride
// with each gradient all-reduce (the window's loss over all ranks, requests to
// stop or pause, every rank's memory figures), and the agreement they make.
struct RunContext::DataParallel final : dist::SyncPassenger {
    // Values at the head of the extras: the window's loss sum (hi, lo), its
    // divisor (hi, lo), stop and pause requests; then each rank's memory figures.
    enum Head { LossHi, LossLo, DivisorHi, DivisorLo, Stop, Pause, HeadSize };

    DataParallel(RunContext& c, dist::DistributedState& s)
        : ctx(c), state(s), rank_memory(static_cast<std::size_t>(s.world_size())) {}

    RunContext& ctx;
    dist::DistributedState& state;
    bool stop_agreed = false;
    bool pause_agreed = false;
    bool window_synced = false;   // a sync since the window began: window_loss is the ranks'
    double window_loss = 0.0;
    MemoryRecord local_memory;    // this rank's figures, refreshed at most every 200 ms
    std::chrono::steady_clock::time_point local_memory_at{};
    std::vector<std::optional<MemoryRecord>> rank_memory; // every rank's, as of the last sync
    std::int64_t calls_seen = 0;  // gradient all-reduces already put in micro-step records

    std::vector<float> board(const dist::MicroBatchPart& current) override {
        // The window's loss so far with this micro-batch's, as micro_batch_done will add it.
        const auto& part = ctx.window_part(current.loss, current.loss_sum);
        const auto value = cpu_scalar(part);
        const double total = ctx.window_total() + (value ? *value : part.item<double>());
        const double divisor = static_cast<double>(ctx.window_divisor_ + ctx.window_count(current.items));
        std::vector<float> v(HeadSize + kMemoryFloats * rank_memory.size(), 0.0f);
        split(total, v[LossHi], v[LossLo]);
        split(divisor, v[DivisorHi], v[DivisorLo]);
        v[Stop] = ctx.control.stop_requested() ? 1.0f : 0.0f;
        v[Pause] = ctx.control.paused() ? 1.0f : 0.0f;
        const auto now = std::chrono::steady_clock::now();
        if (now - local_memory_at >= std::chrono::milliseconds(200)) {
            local_memory = ctx.memory_record();
            local_memory_at = now;
        }
        float* slot = v.data() + HeadSize + kMemoryFloats * static_cast<std::size_t>(state.rank());
        for (const auto field : kRankMemoryFields) {
            split_bytes(local_memory.*field, slot[0], slot[1]);
            slot += 2;
        }
        return v;
    }

    void alight(const std::vector<float>& sums) override {
        const double divisor = static_cast<double>(sums[DivisorHi]) + sums[DivisorLo];
        window_loss = divisor > 0 ? (static_cast<double>(sums[LossHi]) + sums[LossLo]) / divisor : 0.0;
        window_synced = true;
        stop_agreed = stop_agreed || sums[Stop] > 0;
        pause_agreed = sums[Pause] > 0;
        for (std::size_t r = 0; r < rank_memory.size(); ++r) {
            if (static_cast<int>(r) == state.rank()) continue;
            const float* slot = sums.data() + HeadSize + kMemoryFloats * r;
            MemoryRecord m = local_memory;
            bool any = false;
            for (const auto field : kRankMemoryFields) {
                m.*field = join_bytes(slot[0], slot[1]);
                any = any || m.*field > 0;
                slot += 2;
            }
            m.rank = static_cast<int>(r);
            if (any) rank_memory[r] = m;
        }
    }

    // proceed() of a rank: a stop agreed ends the run here on every rank; a
    // pause agreed holds every rank here, where they ask each other every 50 ms
    // (within any --dist-timeout) whether to go on, take one micro-batch, or stop.
    bool proceed() {
        if (stop_agreed) return false;
        if (!pause_agreed) return true;
        for (;;) {
            const bool step = ctx.control.take_step();
            const auto f = state.group().all_reduce(
                std::vector<double>{ctx.control.stop_requested() ? 1.0 : 0.0, ctx.control.paused() ? 1.0 : 0.0,
                                    step ? 1.0 : 0.0},
                dist::ReduceOp::Max);
            if (f[0] > 0) {
                stop_agreed = true;
                return false;
            }
            if (f[1] == 0) {
                pause_agreed = false;
                return true;
            }
            if (f[2] > 0) return true; // one micro-batch, then together here again
            if (std::chrono::steady_clock::now() - ctx.last_memory_record_ >= std::chrono::milliseconds(250))
                ctx.emit_memory_record();
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    }
};

namespace {
// The scale as its float32 tensor holds it: get_scale() answers with the
// configured double until the first scale() makes the tensor.
double as_float32(double scale) { return static_cast<double>(static_cast<float>(scale)); }
} // namespace

LossScaler::LossScaler(GradScalerOptions options)
    : impl_(options), scale_(as_float32(impl_.get_scale())), window_scale_(scale_) {}

void LossScaler::unscale_(Optimizer& optimizer) {
    impl_.unscale_(optimizer.impl());
    if (impl_.is_enabled()) ++unscales_;
}

bool LossScaler::step(Optimizer& optimizer) {
    const bool unscales = impl_.is_enabled() && impl_.stage(optimizer.impl()) == GradScaler::Stage::Ready;
    const bool stepped = impl_.step(optimizer.impl());
    if (unscales) ++unscales_;
    skipped_ = !stepped;
    return stepped;
}

void LossScaler::update() {
    window_scale_ = scale_;
    window_skipped_ = skipped_;
    skipped_ = false;
    impl_.update();
    scale_ = impl_.get_scale();
}

void LossScaler::load_state_dict(const GradScalerState& state) {
    impl_.load_state_dict(state);
    scale_ = as_float32(impl_.get_scale());
}

void Optimizer::zero_grad() {
    for (auto& group : impl_->param_groups())
        for (auto& p : group.params())
            if (p.grad().defined()) p.mutable_grad().reset();
}

double clip_grad_norm_(const std::vector<torch::Tensor>& parameters, double max_norm) {
    if (max_norm > 0) return torch::nn::utils::clip_grad_norm_(parameters, max_norm);
    std::vector<torch::Tensor> norms;
    for (const auto& p : parameters)
        if (p.grad().defined()) norms.push_back(p.grad().norm(2));
    if (norms.empty()) return 0.0;
    return torch::stack(norms).norm(2).item<double>();
}

RunContext::RunContext(const RunConfig& cfg, Sink& s, RunControl& c)
    : config(cfg), sink(s), control(c), device(resolve_device(cfg.device)), log_(std::make_unique<PlainLog>()) {
    // fp16 on a device that --device auto resolved to the CPU: refused as validate()
    // refuses --device cpu.
    auto refuse = [](const std::string& problem) {
        return ConfigError(make_message(message_code::invalid_configuration,
                                        {{"option", "mixed-precision"}, {"problem", problem}}));
    };
    if (const auto problem = mixed_precision_error(config.mixed_precision, device.type()); !problem.empty())
        throw refuse(problem);
    if (config.mixed_precision == MixedPrecision::Bf16 && device.is_cuda())
        if (const auto problem = cuda_bf16_error(device.index()); !problem.empty()) throw refuse(problem);
    build();
}

RunContext::~RunContext() {
    if (dp_) dp_->state.set_passenger(nullptr);
}

int RunContext::rank() const { return dp_ ? dp_->state.rank() : 0; }
int RunContext::world_size() const { return dp_ ? dp_->state.world_size() : 1; }
dist::DistributedState* RunContext::distributed() const { return dp_ ? &dp_->state : nullptr; }
bool RunContext::stopped() const { return dp_ ? dp_->stop_agreed : control.stop_requested(); }

void RunContext::set_log(std::unique_ptr<RunLog> log) { log_ = std::move(log); }

void RunContext::build() {
    budget_bytes_ = parse_byte_size(config.memory_budget).value_or(0);
    data = load_dataset(config);
    if (data.train.size() == 0) throw DataError(to_string(config.dataset) + ": the training split is empty");
    train_loader = std::make_unique<DataLoader>(data.train, config.batch_size, config.shuffle, config.seed);
    eval_loader = std::make_unique<DataLoader>(data.eval, config.batch_size, /*shuffle=*/false, config.seed);
    writes_checkpoints_ = !config.output_dir.empty();
    // Several processes: each trains on its shard (DistributedSampler); the
    // evaluation runs on rank 0 alone, over the whole split.
    if (auto* state = dist::default_state(); state && state->world_size() > 1) {
        dp_ = std::make_unique<DataParallel>(*this, *state);
        train_loader->shard(state->rank(), state->world_size());
    }

    torch::manual_seed(config.seed);
    // A training run reads its gradients from .grad: the kernels may add into it directly.
    model = make_model(config, data.train, KernelSet(config.cpu_kernels, /*gradients_in_place=*/true));
    model->to(device);

    // The Trainer decays the weights but not biases nor LayerNorm's parameters
    // (Trainer.create_optimizer: get_decay_parameter_names, two groups, the second
    // with weight_decay 0.0); the plain loop and Accelerate hand model.parameters()
    // to the optimizer, which decays them all. Without weight decay the groups
    // would not differ: one group then, as before.
    const auto groups = [&](const torch::optim::OptimizerOptions& options) {
        std::vector<torch::optim::OptimizerParamGroup> out;
        if (config.mode != Mode::Trainer || config.weight_decay == 0.0) {
            out.emplace_back(model->parameters(), options.clone());
            return out;
        }
        std::vector<torch::Tensor> layer_norm;
        for (const auto& m : model->modules(/*include_self=*/false))
            if (m->as<torch::nn::LayerNorm>())
                for (const auto& p : m->parameters(/*recurse=*/false)) layer_norm.push_back(p);
        std::vector<torch::Tensor> decay, no_decay;
        for (const auto& item : model->named_parameters()) {
            const bool norm = std::any_of(layer_norm.begin(), layer_norm.end(),
                                          [&](const torch::Tensor& p) { return p.is_same(item.value()); });
            (norm || item.key().find("bias") != std::string::npos ? no_decay : decay).push_back(item.value());
        }
        out.emplace_back(decay, options.clone());
        auto without = options.clone();
        if (auto* adamw = dynamic_cast<torch::optim::AdamWOptions*>(without.get())) adamw->weight_decay(0.0);
        if (auto* sgd = dynamic_cast<torch::optim::SGDOptions*>(without.get())) sgd->weight_decay(0.0);
        out.emplace_back(no_decay, std::move(without));
        return out;
    };
    switch (config.optimizer) {
    case OptimizerKind::AdamW: {
        const auto options = torch::optim::AdamWOptions(config.learning_rate).weight_decay(config.weight_decay);
        optimizer = std::make_unique<Optimizer>(std::make_unique<torch::optim::AdamW>(groups(options), options));
        break;
    }
    case OptimizerKind::Sgd: {
        const auto options =
            torch::optim::SGDOptions(config.learning_rate).momentum(config.momentum).weight_decay(config.weight_decay);
        optimizer = std::make_unique<Optimizer>(std::make_unique<torch::optim::SGD>(groups(options), options));
        break;
    }
    }

    if (config.batch_size > data.train.size())
        throw ConfigError(make_message(message_code::batch_larger_than_data,
                                       {{"batch_size", std::to_string(config.batch_size)},
                                        {"samples", std::to_string(data.train.size())},
                                        {"dataset", to_string(config.dataset)}}));

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
    lr_scheduler =
        std::make_unique<LrScheduler>(optimizer->impl(), config.scheduler, config.warmup_steps, total_updates_);
    GradScalerOptions scaling;
    scaling.init_scale = config.loss_scale_init;
    scaling.enabled = config.uses_loss_scaler();
    scaler = std::make_unique<LossScaler>(scaling);
    if (dp_) join_data_parallel();
    start_ = last_memory_record_ = std::chrono::steady_clock::now();
    if (config.accumulation_steps > micro_batches_per_epoch())
        log("note: --accumulation-steps " + std::to_string(config.accumulation_steps) + " is more than the " +
            std::to_string(micro_batches_per_epoch()) + " micro-batches of an epoch; each epoch is one window of " +
            std::to_string(micro_batches_per_epoch()) + " micro-batches, flushed at its end");
}

// The ranks check that they run the same configuration, learn whether rank 0
// writes checkpoints (every rank takes part in saving one), and start from rank
// 0's weights and buffers, as DDP's constructor broadcasts them.
void RunContext::join_data_parallel() {
    auto& group = dp_->state.group();
    const std::uint64_t h = fnv1a(shared_options(config));
    const double hi = static_cast<double>(h >> 32), lo = static_cast<double>(h & 0xffffffffu);
    const double writes = is_main_process() && writes_checkpoints_ ? 1.0 : 0.0;
    const auto m = group.all_reduce(std::vector<double>{hi, lo, -hi, -lo, writes}, dist::ReduceOp::Max);
    if (m[0] != -m[2] || m[1] != -m[3])
        throw ConfigError("the " + std::to_string(world_size()) +
                          " processes were started with different options; every rank must train the same "
                          "configuration (compare their command lines)");
    writes_checkpoints_ = m[4] > 0;
    std::vector<torch::Tensor> state;
    for (const auto& p : model->parameters()) state.push_back(p);
    for (const auto& b : model->buffers()) state.push_back(b);
    dist::broadcast_tensors(group, state);
    dp_->state.set_passenger(dp_.get());
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

std::int64_t RunContext::current_memory_bytes() const {
    if (device.is_cuda()) return memory::cuda_stats(device.index()).allocated;
    return memory::cpu_counters().current;
}

std::int64_t RunContext::run_peak_memory_bytes() const {
    // On CUDA the allocator's peak is reset at every reading (for the step's own
    // peak), so the run's is the largest of those and the one in progress.
    if (device.is_cuda()) return std::max(cuda_run_peak_, memory::cuda_stats(device.index()).peak_allocated);
    return memory::cpu_counters().peak;
}

std::int64_t RunContext::window_peak_and_reset() {
    if (device.is_cuda()) {
        const auto peak = memory::cuda_stats(device.index()).peak_allocated;
        memory::cuda_reset_peak(device.index());
        cuda_run_peak_ = std::max(cuda_run_peak_, peak);
        return peak;
    }
    const auto peak = memory::cpu_counters().window_peak;
    memory::reset_window_peak();
    return peak;
}

memory::StaticMemory RunContext::static_memory_now() const {
    return memory::static_memory(model->parameters(), optimizer ? &optimizer->impl() : nullptr, device);
}

MemoryRecord RunContext::memory_record() const {
    MemoryRecord r;
    r.elapsed_s = elapsed_s();
    r.budget_bytes = budget_bytes_;
    r.rss_bytes = memory::process_rss_bytes();
    if (device.is_cuda()) {
        const auto s = memory::cuda_stats(device.index());
        r.cuda = true;
        r.memory_bytes = s.allocated;
        r.peak_memory_bytes = std::max(cuda_run_peak_, s.peak_allocated);
        r.reserved_bytes = s.reserved;
    } else {
        const auto c = memory::cpu_counters();
        r.memory_bytes = c.current;
        r.peak_memory_bytes = c.peak;
    }
    const auto categories = memory::categorize(static_memory_now(), r.memory_bytes);
    r.parameters_bytes = categories.parameters_bytes;
    r.gradients_bytes = categories.gradients_bytes;
    r.optimizer_state_bytes = categories.optimizer_state_bytes;
    r.activations_bytes = categories.activations_bytes;
    r.rank = rank();
    return r;
}

void RunContext::emit_memory_record() {
    const MemoryRecord r = memory_record();
    sink.on_memory(r);
    if (dp_) {
        dp_->local_memory = r;
        dp_->local_memory_at = std::chrono::steady_clock::now();
        if (is_main_process())
            for (const auto& other : dp_->rank_memory)
                if (other) {
                    MemoryRecord m = *other;
                    m.elapsed_s = r.elapsed_s;
                    sink.on_memory(m);
                }
    }
    last_memory_record_ = std::chrono::steady_clock::now();
}

bool RunContext::proceed() {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_memory_record_ >= std::chrono::milliseconds(250)) emit_memory_record();
    if (dp_) return dp_->proceed();
    return control.proceed();
}

void RunContext::micro_batch_done(const ModelOutput& outputs, const Batch& batch, std::int64_t index, bool sync) {
    // The peak since the last reading (loading the batch, forward, backward) less
    // the static part now, the largest it was (gradients are made in backward).
    // Parameters, gradients and optimizer state are the same after every backward
    // of a window (its first makes the gradients): read once per window.
    if (!window_static_) window_static_ = static_memory_now();
    peak_meter_.after_backward(window_peak_and_reset(), *window_static_);
    ++progress.micro_steps;
    progress.samples_seen += batch.size * world_size(); // every rank's micro-batch (shards have equal lengths)
    // The window's loss: token losses over the window's tokens, or the mean of the
    // micro-batch means. On the CPU the value is read where it lies (a tensor add
    // and a detach cost each micro-batch about 5 µs); on a GPU one tensor add, no
    // synchronisation until the step.
    const auto& part = window_part(outputs.loss, outputs.loss_sum);
    if (const auto value = cpu_scalar(part))
        window_total_cpu_ += *value;
    else
        window_total_ = window_total_.defined() ? window_total_ + part.detach() : part.detach();
    window_divisor_ += window_count(batch.num_items);

    if (config.record_micro_steps) {
        const std::int64_t k = config.accumulation_steps;
        const std::int64_t window_start = index - index % k;
        MicroStepRecord r;
        r.micro_step = progress.micro_steps;
        r.step = progress.global_step;
        r.window_index = static_cast<int>(index - window_start + 1);
        r.window_size = static_cast<int>(std::min(window_start + k, micro_batches_per_epoch()) - window_start);
        r.sync = sync;
        const auto loss = cpu_scalar(outputs.loss);
        r.loss = loss ? *loss : outputs.loss.item<double>();
        // The norm costs a pass over every gradient: only at teaching pace (or while
        // stepping by hand), where a person watches the accumulation meter.
        r.grad_norm = config.micro_step_delay_s > 0 || control.paused() ? clip_grad_norm_(model->parameters(), 0)
                                                                         : std::nan("");
        r.epoch = fractional_epoch(index + 1);
        if (dp_) {
            const auto calls = dp_->state.gradients().counters().calls;
            r.grad_allreduces = calls - dp_->calls_seen;
            dp_->calls_seen = calls;
        }
        r.autocast = config.mixed_precision != MixedPrecision::No;
        r.loss_scale = scaler->is_enabled() ? scaler->get_scale() : 0.0;
        sink.on_micro_step(r);
    }
    if (config.micro_step_delay_s > 0)
        std::this_thread::sleep_for(std::chrono::duration<double>(config.micro_step_delay_s));
}

double RunContext::window_total() const {
    return window_total_cpu_ + (window_total_.defined() ? window_total_.item<double>() : 0.0);
}

bool RunContext::window_is_finite(double grad_norm) {
    window_loss_ = window_divisor_ > 0 ? window_total() / static_cast<double>(window_divisor_) : 0.0;
    // Several processes: the mean over every rank's micro-batches, summed at the
    // window's gradient sync.
    if (dp_ && dp_->window_synced) window_loss_ = dp_->window_loss;
    if (dp_) dp_->window_synced = false;
    window_grad_norm_ = grad_norm;
    window_learning_rate_ = lr_scheduler->current_lr();
    window_total_ = torch::Tensor();
    window_total_cpu_ = 0.0;
    window_divisor_ = 0;
    window_skipped_ = false;
    // Below fp16's smallest number: a scale no overflow asks for.
    constexpr double kSmallestLossScale = 0x1p-24;
    const bool overflow = scaler->is_enabled() && scaler->get_scale() >= kSmallestLossScale;
    if (std::isfinite(window_loss_) && (std::isfinite(grad_norm) || overflow)) return true;
    if (config.skip_nonfinite) {
        window_skipped_ = true;
        ++skipped_updates;
        log("skipped optimizer step " + std::to_string(progress.global_step + 1) +
            ": non-finite loss or gradient (--skip-nonfinite); the weights stay as they were");
        return false;
    }
    auto text = [](double v) { return std::isnan(v) ? std::string("nan") : std::to_string(v); };
    throw DivergedError(make_message(message_code::diverged,
                                     {{"step", std::to_string(progress.global_step + 1)},
                                      {"good_step", std::to_string(progress.global_step)},
                                      {"loss", text(window_loss_)},
                                      {"grad_norm", text(grad_norm)},
                                      {"gradient_only", std::isfinite(window_loss_) ? "yes" : ""}}));
}

bool RunContext::optimizer_step_done(std::int64_t done_in_epoch) {
    ++progress.global_step;
    progress.next_index = done_in_epoch;
    progress.micro_steps_at_step = progress.micro_steps;
    progress.samples_at_step = progress.samples_seen;
    progress.last_loss = window_loss_;

    StepRecord r;
    r.step = progress.global_step;
    r.micro_step = progress.micro_steps;
    r.epoch = fractional_epoch(done_in_epoch);
    r.loss = window_loss_;
    r.learning_rate = window_learning_rate_;
    r.grad_norm = window_grad_norm_;
    r.samples_seen = progress.samples_seen;
    r.elapsed_s = elapsed_s();
    r.memory_bytes = current_memory_bytes();
    // Clipping, the optimizer step and zero_grad since the last backward.
    peak_meter_.after_step(window_peak_and_reset(), static_memory_now());
    window_static_.reset(); // the step made optimizer state; zero_grad may free the gradients
    const auto peak = peak_meter_.take_step();
    r.peak_memory_bytes = peak.peak_bytes;
    r.peak_activations_bytes = peak.peak_activations_bytes;
    if (dp_) {
        const auto c = dp_->state.gradients().take_counters();
        r.grad_allreduces = c.calls;
        r.allreduce_seconds = c.seconds;
        r.allreduce_bytes = c.bytes;
        dp_->calls_seen = 0;
    }
    r.loss_scale = scaler->window_scale();
    r.skipped = window_skipped_ || scaler->window_skipped();
    if (scaler->window_skipped()) {
        ++overflow_skips;
        log("skipped optimizer step " + std::to_string(r.step) + ": the loss scaler found inf/NaN gradients at scale " +
            python_float(r.loss_scale) + "; the weights and the schedule stay, the scale is now " +
            python_float(scaler->get_scale()));
    }
    sink.on_step(r);
    log_->on_step(*this, r);

    // In the Trainer's order: DefaultFlowCallback.on_step_end decides, then
    // _maybe_log_save_evaluate evaluates and then saves. At the run's last step a
    // steps strategy evaluates (unless it just did) and saves; an epoch strategy
    // waits for the epoch's end, which --max-steps inside an epoch brings here (the
    // Trainer's loop breaks to on_epoch_end): so with --eval-strategy epoch and
    // --save-strategy steps the last checkpoint is written before the last evaluation,
    // as the Trainer writes it (tests/peers compares their log_history).
    const bool last = reached_max_steps();
    const bool mid_epoch_end = last && done_in_epoch < micro_batches_per_epoch();
    if (config.eval_strategy == Strategy::Steps && last_eval_step_ != progress.global_step &&
        (progress.global_step % config.eval_steps == 0 || last))
        evaluate();
    if (checkpoint_due(false) || (last && config.save_strategy == Strategy::Steps)) save_checkpoint();
    if (mid_epoch_end) {
        if (config.eval_strategy == Strategy::Epoch && last_eval_step_ != progress.global_step) evaluate();
        if (config.save_strategy == Strategy::Epoch) save_checkpoint();
    }
    return !mid_epoch_end;
}

void RunContext::epoch_done() {
    progress.next_index = micro_batches_per_epoch();
    const bool last = progress.epoch + 1 >= num_epochs_ || reached_max_steps();
    if (config.eval_strategy == Strategy::Epoch || (last && config.eval_strategy != Strategy::No &&
                                                    last_eval_step_ != progress.global_step))
        evaluate();
    const bool save = checkpoint_due(true) || (last && config.save_strategy != Strategy::No);
    ++progress.epoch;
    progress.next_index = 0;
    if (save) save_checkpoint();
}

bool RunContext::checkpoint_due(bool epoch_end) const {
    if (!writes_checkpoints_) return false;
    if (epoch_end) return config.save_strategy == Strategy::Epoch;
    return config.save_strategy == Strategy::Steps && progress.global_step % config.save_steps == 0;
}

std::vector<torch::Tensor> RunContext::rng_states() {
    auto gen = at::detail::getDefaultCPUGenerator();
    torch::Tensor mine;
    {
        std::lock_guard<std::mutex> lock(gen.mutex());
        mine = gen.get_state();
    }
    if (!dp_) return {mine};
    // Every rank's state to every rank (rows of zeros but one, summed: exact for
    // bytes in float32). Every rank calls this at the same checkpoint, so it is
    // also the barrier before rank 0 saves.
    auto& group = dp_->state.group();
    auto all = torch::zeros({world_size(), mine.numel()}, torch::kFloat);
    all[rank()].copy_(mine.to(torch::kFloat));
    auto on_device = all.to(group.device());
    group.all_reduce(on_device);
    all = on_device.cpu();
    std::vector<torch::Tensor> states;
    for (int r = 0; r < world_size(); ++r) states.push_back(all[r].to(torch::kUInt8).clone());
    return states;
}

std::string RunContext::save_checkpoint() {
    if (!writes_checkpoints_ || config.save_strategy == Strategy::No || progress.global_step == 0) return {};
    const auto final_dir =
        (std::filesystem::path(config.output_dir) / ("checkpoint-" + std::to_string(progress.global_step))).string();
    if (last_saved_step_ == progress.global_step) return final_dir;
    // Every rank's RNG state goes in; only rank 0 writes.
    const auto states = rng_states();
    if (!is_main_process()) {
        last_saved_step_ = progress.global_step;
        return final_dir;
    }
    // A checkpoint is written whatever the budget (as a GPU run would write it from
    // host memory); the budget applies again to the training that follows.
    const auto budget = memory::cpu_counters().budget;
    memory::set_cpu_budget(0);
    struct RestoreBudget {
        std::int64_t bytes;
        ~RestoreBudget() { memory::set_cpu_budget(bytes); }
    } restore{budget};
    auto saved = accum::save_checkpoint(*this, config.output_dir, static_cast<int>(config.save_total_limit), states);
    last_saved_step_ = progress.global_step;
    window_peak_and_reset(); // what saving held is not the next step's
    for (const auto& note : saved.notes) log("note: " + note);
    return saved.directory;
}

void RunContext::load_checkpoint(const std::string& dir) {
    accum::load_checkpoint(*this, dir);
    last_saved_step_ = progress.global_step;
    window_peak_and_reset(); // reading the checkpoint is not the first step's
}

EvalRecord RunContext::evaluate() {
    last_eval_step_ = progress.global_step;
    if (!is_main_process()) { // rank 0 evaluates (the whole split); the others go on to the next sync
        EvalRecord none;
        none.step = progress.global_step;
        none.eval_loss = none.eval_accuracy = none.eval_f1 = std::nan("");
        return none;
    }
    // In the run's precision, as Accelerate's prepared model and the Trainer evaluate.
    AutocastScope autocast(device.type(), config.mixed_precision);
    const auto eval_start = std::chrono::steady_clock::now();
    const auto result = evaluate_model(*model, *eval_loader, device);
    const double eval_runtime = std::chrono::duration<double>(std::chrono::steady_clock::now() - eval_start).count();
    window_peak_and_reset(); // evaluation's memory is not the next step's activations
    EvalRecord r;
    r.step = progress.global_step;
    r.epoch = fractional_epoch(progress.next_index);
    r.eval_loss = result.loss;
    r.eval_accuracy = result.metrics.accuracy;
    r.eval_f1 = result.metrics.f1;
    r.runtime_s = eval_runtime;
    r.samples = eval_loader->dataset().size();
    r.batches = eval_loader->size();
    sink.on_eval(r);
    log_->on_eval(*this, r);
    return r;
}

void RunContext::log(const std::string& line) { sink.on_log(line); }

} // namespace accum

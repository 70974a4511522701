#include "training/run_parts.h"

#include <cmath>

#include <torch/cuda.h>
#include <torch/utils.h>

#include "accum/engine_messages.h"
#include "accum/errors.h"
#include "memory/cuda_memory.h"
#include "data/tensor_file.h"
#include "training/mixed_precision.h"

namespace accum {

namespace {

torch::Device device_named(const std::string& name) {
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

// Every label of `data` (a split of `path`) below the model's `width`: a
// module from a file says how many classes (or tokens) its logits cover, and a
// label beyond them fails deep inside its forward, mid-run, far from its cause.
void check_labels(const TensorDataset& data, std::int64_t width, const std::string& path, const char* split) {
    if (width <= 0 || data.size() == 0) return;
    // By chunks of rows, in int64: the labels may be a mapped file's, of any integer dtype.
    std::int64_t count = 0, sample = -1, position = 0, label = 0;
    for_row_chunks(data.labels, [&](std::int64_t first, const torch::Tensor& chunk) {
        const auto rows = chunk.to(torch::kInt64);
        const auto bad = rows.ge(width).logical_and(rows.ne(kIgnoreIndex));
        const auto n = bad.sum().item<std::int64_t>();
        if (n > 0 && sample < 0) {
            const auto at = bad.nonzero()[0];
            sample = first + at[0].item<std::int64_t>();
            position = rows.dim() == 2 ? at[1].item<std::int64_t>() : 0;
            label = rows.dim() == 1 ? rows[at[0]].item<std::int64_t>() : rows[at[0]][at[1]].item<std::int64_t>();
        }
        count += n;
    });
    if (count == 0) return;
    std::string what = "label " + std::to_string(label);
    if (data.labels.dim() == 2) what += " at position " + std::to_string(position);
    throw corrupt_data(path, what + " of " + split + " sample " + std::to_string(sample) + " is outside the model's " +
                                 std::to_string(width) + " outputs (its logits cover labels 0 to " +
                                 std::to_string(width - 1) + "); " + std::to_string(count) + " label" +
                                 (count == 1 ? " is" : "s are") + " out of range in that split");
}

} // namespace

torch::Device resolve_run_device(const RunConfig& config) {
    const auto device = device_named(config.device);
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
    return device;
}

std::unique_ptr<RunParts> build_run_parts(const RunConfig& config, ShardOf shard) {
    auto parts = std::make_unique<RunParts>();
    auto& p = *parts;
    p.device = resolve_run_device(config);
    p.data = load_dataset(config);
    if (p.data.train.size() == 0) throw DataError(to_string(config.dataset) + ": the training split is empty");
    // Only a tensors file may come without an eval split. As the Trainer refuses an
    // eval_strategy without an eval_dataset, the run refuses to evaluate nothing.
    if (p.data.eval.size() == 0 && config.eval_strategy != Strategy::No)
        throw ConfigError(make_message(
            message_code::invalid_configuration,
            {{"option", "eval-strategy"},
             {"problem", config.data_path + " holds no eval split (eval_input_ids or eval_inputs, eval_labels, or a "
                                            "nested validation split): add one, or use --eval-strategy no"}}));
    p.train_loader = std::make_unique<DataLoader>(p.data.train, config.batch_size, config.shuffle, config.seed);
    p.eval_loader = std::make_unique<DataLoader>(p.data.eval, config.batch_size, /*shuffle=*/false, config.seed);
    // Several processes: each trains on its shard (DistributedSampler); the
    // evaluation runs on rank 0 alone, over the whole split.
    if (shard.world_size > 1) p.train_loader->shard(shard.rank, shard.world_size);

    torch::manual_seed(config.seed);
    // A training run reads its gradients from .grad: the kernels may add into it directly.
    p.model = make_model(config, p.data.train, KernelSet(config.cpu_kernels, /*gradients_in_place=*/true));
    check_labels(p.data.train, p.model->label_width(), config.data_path, "training");
    check_labels(p.data.eval, p.model->label_width(), config.data_path, "eval");
    // A causal LM that shifts its labels itself counts its label items from the second position.
    if (const auto shift = p.model->label_shift(); shift > 0) {
        count_label_items(p.data.train, shift);
        count_label_items(p.data.eval, shift);
    }
    p.model->to(p.device);
    p.optimizer = make_optimizer(config, *p.model);

    if (config.batch_size > p.data.train.size())
        throw ConfigError(make_message(message_code::batch_larger_than_data,
                                       {{"batch_size", std::to_string(config.batch_size)},
                                        {"samples", std::to_string(p.data.train.size())},
                                        {"dataset", to_string(config.dataset)}}));

    const std::int64_t k = config.accumulation_steps;
    p.updates_per_epoch = (p.train_loader->size() + k - 1) / k;
    if (config.max_steps > 0) {
        p.total_updates = config.max_steps;
        p.num_epochs = (config.max_steps + p.updates_per_epoch - 1) / p.updates_per_epoch;
    } else {
        p.num_epochs = config.epochs;
        p.total_updates = config.epochs * p.updates_per_epoch;
    }
    // --warmup-ratio counts when --warmup-steps is 0: ceil(ratio × the run's
    // optimizer steps), as Transformers' get_warmup_steps.
    const std::int64_t warmup =
        config.warmup_steps > 0 ? config.warmup_steps
                                : static_cast<std::int64_t>(std::ceil(config.warmup_ratio * static_cast<double>(p.total_updates)));
    p.lr_scheduler = std::make_unique<LrScheduler>(p.optimizer->impl(), config.scheduler, warmup, p.total_updates);
    p.scaler = make_loss_scaler(config);
    return parts;
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later

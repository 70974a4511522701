#pragma once
// Everything a training run needs to know, as plain values. Torch-free: the
// GUI and the CLI build one of these; the engine validates and runs it.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace accum {

// The enumerated options. Each value's name is written once (run_config_choices.cpp)
// and read by the option table (option_table.cpp); everything past it switches on the enum.
enum class Mode { Pytorch, Accelerator, Trainer };
// Tensors: named tensors saved from Python (--data file.pt: input_ids or inputs, labels,
// optionally attention_mask and an eval split).
enum class DatasetKind { FashionMnist, SyntheticPairs, SyntheticLm, Csv, Tensors };
// File: a TorchScript module the user made (torch.jit.script or trace), --model file.pt.
enum class ModelKind { Mlp, Cnn, Transformer, File };
enum class OptimizerKind { Sgd, AdamW };
enum class SchedulerKind { Constant, Linear, Cosine };
// When to evaluate or save: Transformers' IntervalStrategy.
enum class Strategy { Epoch, Steps, No };
enum class LossNormalization { Mean, Tokens };
// The engine's hand-written CPU kernels (fused) or LibTorch's own operators (aten).
enum class CpuKernels { Fused, Aten };
// The process group's backend: auto is NCCL on CUDA where the build has it, else Gloo.
enum class Backend { Auto, Gloo, Nccl };
// Accelerate's mixed_precision: the forward under autocast in bf16 or fp16 (CUDA).
enum class MixedPrecision { No, Bf16, Fp16 };
// The message for fp16 asked of a device without it (validate() for --device
// cpu, the run for --device auto without CUDA, the studio on such a machine).
// Accelerate refuses fp16 on the CPU too; CPU autocast in LibTorch 1.13 knows only bf16.
inline constexpr std::string_view kFp16NeedsCuda = "fp16 needs CUDA; use bf16 on the CPU";
// The loss scaler: none, or dynamic (GradScaler's; on for fp16).
enum class LossScaling { None, Dynamic };

// Names of an enumerated option's values, in their order of declaration
// ("pytorch", "accelerator", "trainer"). Defined for the enums above.
template <typename E>
const std::vector<std::string>& choice_names();
template <typename E>
const std::string& to_string(E value);
// The value a name stands for; nothing for an unknown name.
template <typename E>
std::optional<E> parse_choice(const std::string& name);

struct RunConfig {
    // What to train.
    Mode mode = Mode::Pytorch;
    DatasetKind dataset = DatasetKind::FashionMnist;
    std::string data_path;                 // directory (fashion-mnist) or file (csv, tensors); empty = default
    std::string label_column = "label";    // csv only
    ModelKind model = ModelKind::Mlp;
    std::string model_file;                // model file: the TorchScript module to train
    bool batch_norm = false;               // add BatchNorm to the mlp/cnn (a pitfall demo)
    double dropout = 0.0;                  // dropout probability in the model
    int transformer_layers = 2;            // encoder layers of the transformer
    // Pitfall demo (pytorch style): lr_scheduler.step() after every micro-batch
    // instead of every optimizer step, so the schedule runs K times too fast.
    bool scheduler_per_micro_batch = false;

    // Batching and length of the run.
    std::int64_t batch_size = 64;          // micro-batch
    std::int64_t accumulation_steps = 4;   // K
    std::int64_t epochs = 3;               // 0 = unset (then max_steps decides)
    std::int64_t max_steps = 0;            // optimizer steps; 0 = unset

    // Memory levers besides accumulation.
    bool gradient_checkpointing = false;   // recompute each block's activations in backward

    // Optimisation.
    double learning_rate = 0.05;
    OptimizerKind optimizer = OptimizerKind::Sgd;
    double momentum = 0.9;                 // sgd only
    double weight_decay = 0.0;
    SchedulerKind scheduler = SchedulerKind::Constant;
    std::int64_t warmup_steps = 0;
    double max_grad_norm = 0.0;            // 0 = no clipping
    bool skip_nonfinite = false;           // skip a window whose loss/gradient is not finite (as GradScaler does)
    LossNormalization loss_normalization = LossNormalization::Mean;
    // With warmup_steps 0: warm up over ceil(ratio × the run's optimizer steps),
    // as Transformers' get_warmup_steps (the steps are known once the data is).
    double warmup_ratio = 0.0;

    // Mixed precision.
    MixedPrecision mixed_precision = MixedPrecision::No;
    LossScaling loss_scaling = LossScaling::None; // dynamic is implied by fp16
    double loss_scale_init = 65536.0;      // GradScaler's init_scale (2^16)
    // Pitfall demo: unscale_ and update() the scaler after every micro-batch
    // instead of once per window.
    bool scaler_per_micro_batch = false;

    // Evaluation, logging, checkpoints.
    Strategy eval_strategy = Strategy::Epoch;
    std::int64_t eval_steps = 0;           // with eval_strategy steps
    std::int64_t logging_steps = 10;       // stdout log every N optimizer steps
    Strategy save_strategy = Strategy::Epoch;
    std::int64_t save_steps = 0;
    std::int64_t save_total_limit = 0;     // 0 = keep all
    bool auto_find_batch_size = false;     // trainer / accelerator
    std::string report_to = "none";   // "none" or "tensorboard" (--report-to)

    // Run environment.
    std::uint64_t seed = 0;
    bool shuffle = true;
    std::string device = "auto";           // auto | cpu | cuda | cuda:N
    int threads = 0;                       // 0 = chosen by the engine
    CpuKernels cpu_kernels = CpuKernels::Fused;
    std::string memory_budget = "0";       // e.g. 512MiB, 2GiB; 0 = none
    std::string output_dir;                // empty = no files
    bool overwrite_output_dir = false;     // replace a run already in output_dir
    std::string metrics_file;              // empty = <output_dir>/metrics.jsonl
    std::string resume_from;               // checkpoint directory

    // Data parallelism, like torchrun: N processes per node on M nodes. A process
    // started with RANK, WORLD_SIZE, … in its environment joins as that rank.
    int nproc_per_node = 1;
    int nnodes = 1;
    int node_rank = 0;
    std::string master_addr = "127.0.0.1";
    int master_port = 29500;
    Backend backend = Backend::Auto;
    double dist_timeout_s = 60.0;          // rendezvous and collectives
    // Pitfall demo (Accelerate's sync_each_batch): all-reduce the gradients after
    // every backward instead of once per window.
    bool sync_each_micro_batch = false;
    bool quiet = false;
    bool record_micro_steps = false;       // emit a record per micro-batch (GUI)
    // The studio's compared runs (the lab, the lesson's experiments): the thread
    // count chosen at the start stays to the end, so runs compared side by side
    // sum in one order whatever the neighbours do. No option: never in a file.
    bool keep_threads = false;
    double micro_step_delay_s = 0.0;       // teaching pace: sleep after each micro-batch
    bool disable_tqdm = false;             // accum-run: no progress bar on a terminal

    std::int64_t world_size() const { return std::int64_t(nproc_per_node) * nnodes; }
    // Whether the run scales its loss: --loss-scaling dynamic, or fp16 (which implies it).
    bool uses_loss_scaler() const { return loss_scaling == LossScaling::Dynamic || mixed_precision == MixedPrecision::Fp16; }
    // micro-batch × K × processes: the samples of one update.
    std::int64_t effective_batch() const { return batch_size * accumulation_steps * world_size(); }
};

// One problem found in a configuration: the option it concerns (spelled as on
// the command line, without dashes; empty for a word that is no option's) and
// a sentence saying what is wrong.
struct ConfigProblem {
    std::string option;
    std::string message;
    std::string to_string() const { return option.empty() ? message : "--" + option + ": " + message; }
};

// Every problem in the configuration, in option order; empty when it is valid.
std::vector<ConfigProblem> validate(const RunConfig& config);

// The same training as a measurement runs it (the planner's probes, the memory
// estimate): no files, no pace, no budget, no resume, nothing printed, one process.
RunConfig for_measurement(RunConfig config);

// Whether --model's value is a TorchScript file rather than a model's name: a
// path (with '/') or a name ending in .pt, .pth, .ts or .torchscript.
bool looks_like_model_file(const std::string& text);

// Parses sizes such as "512MiB", "2GiB", "1.5GB", "100000" (bytes), "0".
// Binary (KiB, MiB, GiB) and decimal (KB, MB, GB) units; case-insensitive.
std::optional<std::int64_t> parse_byte_size(const std::string& text);
std::string format_byte_size(std::int64_t bytes);

// Sizes of the built-in datasets' training splits (the generators and the
// Fashion-MNIST files); 0 for csv, whose size depends on the file.
inline constexpr std::int64_t kFashionMnistTrainSize = 60000;
inline constexpr std::int64_t kSyntheticPairsTrainSize = 4000;
inline constexpr std::int64_t kSyntheticLmTrainSize = 2000;
std::int64_t builtin_train_size(DatasetKind dataset);

// JSON, with the same keys as the long command-line options ("batch-size").
// from_json_text applies the keys it finds on top of `base`; problems name the key.
std::string to_json_text(const RunConfig& config);

// Sets one option from text, as given on the command line ("64", "0.05",
// "true"), through the same table and checks as the JSON form. `key` is the
// option name ("batch-size"; '_' spellings and the aliases learning-rate and
// gradient-accumulation-steps are accepted). False, with `error` saying why,
// for an unknown key or a value of the wrong type or range.
bool set_option(RunConfig& config, const std::string& key, const std::string& text, std::string& error);
RunConfig from_json_text(const std::string& text, const RunConfig& base,
                         std::vector<ConfigProblem>& problems);

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later

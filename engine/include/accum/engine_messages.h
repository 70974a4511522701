#pragma once
// The engine's messages as codes with arguments: the one table of them.
//
// A summary (and the exceptions that end a run: DataError, ConfigError,
// DivergedError) carries its message twice: as an EngineMessage {code, args}
// for an interface that says it in its own language (the studio renders each
// code through tr(), ui/engine_text.cpp), and as English text for accum-run,
// logs and JSON. The English text IS english_text(message): rendered from the
// template below, so the two cannot drift.
//
// Codes are stable: a run directory's summary.json keeps them (message_code,
// message_args). Add a row for a new message, never reword a code's meaning;
// the studio's test fails until the new code has its translated rendering.
//
// Templates: `{name}` is the argument `name`; `{name?A|B}` is A when the
// argument is present and not empty, else B (`{name?A}`: else nothing); A and B
// are templates themselves; `{@name}` is the template of the code held in the
// argument `name`, rendered with the same arguments (a message inside a
// message: the out-of-memory summary's suggestion). Arguments are text as the
// English shows it: numbers in full, sizes as format_byte_size writes them
// ("40.0 MiB"), paths as given. An optional argument is marked `?`.

#include <map>
#include <string>
#include <string_view>

#include "accum/records.h"

namespace accum {

namespace message_code {
// How a run ended.
inline constexpr const char* completed = "completed";
inline constexpr const char* stopped = "stopped";
inline constexpr const char* stopped_before_start = "stopped_before_start";
inline constexpr const char* out_of_memory = "out_of_memory";
inline constexpr const char* diverged = "diverged";
inline constexpr const char* diverged_detail = "diverged_detail";
inline constexpr const char* internal_error = "internal_error";
inline constexpr const char* run_in_progress = "run_in_progress";
// The out-of-memory summary's suggestion (its argument `suggestion`).
inline constexpr const char* suggest_batch_one = "suggest_batch_one";
inline constexpr const char* suggest_halved = "suggest_halved";
inline constexpr const char* suggest_measured = "suggest_measured";
inline constexpr const char* suggest_nothing_fits = "suggest_nothing_fits";
// Why the memory plan found nothing (MemoryPlan::reason; the argument `plan`).
inline constexpr const char* plan_predicted_too_big = "plan_predicted_too_big";
inline constexpr const char* plan_nothing_fits = "plan_nothing_fits";
// Why the plan picked its lever (MemoryPlan::why; the suggestion's argument `why`).
inline constexpr const char* plan_faster = "plan_faster";
inline constexpr const char* plan_checkpointing_no_larger = "plan_checkpointing_no_larger";
inline constexpr const char* plan_only_checkpointing = "plan_only_checkpointing";
// The configuration.
inline constexpr const char* invalid_configuration = "invalid_configuration";
inline constexpr const char* config_error = "config_error";
inline constexpr const char* device_unavailable = "device_unavailable";
inline constexpr const char* device_missing = "device_missing";
inline constexpr const char* batch_larger_than_data = "batch_larger_than_data";
inline constexpr const char* output_dir_unusable = "output_dir_unusable";
// The run's files.
inline constexpr const char* write_failed = "write_failed";
// The data.
inline constexpr const char* data_error = "data_error";
inline constexpr const char* data_directory_missing = "data_directory_missing";
inline constexpr const char* data_file_missing = "data_file_missing";
inline constexpr const char* data_cannot_open = "data_cannot_open";
inline constexpr const char* data_not_gzip = "data_not_gzip";
inline constexpr const char* data_truncated = "data_truncated";
inline constexpr const char* data_corrupt = "data_corrupt";
inline constexpr const char* data_bad_line = "data_bad_line";
inline constexpr const char* csv_field_count = "csv_field_count";
inline constexpr const char* csv_not_a_number = "csv_not_a_number";
inline constexpr const char* csv_no_label_column = "csv_no_label_column";
// Several processes (data parallel).
inline constexpr const char* distributed_failure = "distributed_failure";
inline constexpr const char* worker_program_missing = "worker_program_missing";
} // namespace message_code

struct MessageTemplate {
    const char* code;
    const char* arguments; // names, `?` after an optional one
    const char* english;
};

// clang-format off
inline constexpr MessageTemplate message_templates[] = {
    // ---------------------------------------------------------------- outcomes
    // skipped: windows --skip-nonfinite skipped; overflow_skipped: windows the loss scaler skipped.
    {message_code::completed,
     "steps, skipped?, overflow_skipped?, auto_batch_size?, auto_accumulation_steps?",
     "completed {steps} optimizer steps{skipped? ({skipped} skipped as non-finite by --skip-nonfinite)}"
     "{overflow_skipped? ({overflow_skipped} skipped for overflow by the loss scaler)}"
     "{auto_batch_size? (auto_find_batch_size chose micro-batch {auto_batch_size} × {auto_accumulation_steps})}"},
    {message_code::stopped,
     "step, checkpoint?, checkpoint_error?, auto_batch_size?, auto_accumulation_steps?",
     "stopped at optimizer step {step}{checkpoint?; checkpoint {checkpoint}}"
     "{checkpoint_error?; checkpoint (could not be written: {checkpoint_error})}"
     "{auto_batch_size? (auto_find_batch_size chose micro-batch {auto_batch_size} × {auto_accumulation_steps})}"},
    {message_code::stopped_before_start, "auto_batch_size?, auto_accumulation_steps?",
     "stopped before the run started"
     "{auto_batch_size? (auto_find_batch_size chose micro-batch {auto_batch_size} × {auto_accumulation_steps})}"},
    // budget: the configured budget (absent: none); peak: tensor memory the run
    // reached; error: LibTorch's (or the counting allocator's) first line;
    // requested, in_use: the allocation the counting allocator refused and the
    // memory in use then (absent on CUDA); suggestion: a suggest_* code (absent
    // while auto_find_batch_size retries); reached_zero: auto_find_batch_size
    // found no micro-batch.
    {message_code::out_of_memory,
     "batch_size, accumulation_steps, budget?, peak, error, requested?, in_use?, suggestion?, reached_zero?",
     "{reached_zero?No executable batch size found, reached zero. }"
     "out of memory at micro-batch {batch_size} × {accumulation_steps} accumulation steps "
     "(budget {budget?{budget}|none}, peak reached {peak}). {@suggestion} [{error}]"},
    // step: the optimizer step whose window was non-finite; good_step: the step the
    // weights stay at; gradient_only: the loss was finite, the gradient norm not.
    {message_code::diverged,
     "step, good_step, loss, grad_norm, gradient_only?, checkpoint?, checkpoint_error?",
     "diverged: the loss became {gradient_only?finite but the gradient norm }non-finite at optimizer step {step} "
     "(loss {loss}, gradient norm {grad_norm}); the weights were left at step {good_step}. "
     "Lower --lr or set --max-grad-norm"
     "{checkpoint?; last good checkpoint {checkpoint}}"
     "{checkpoint_error?; last good checkpoint (could not be written: {checkpoint_error})}"},
    {message_code::diverged_detail,
     "detail, checkpoint?, checkpoint_error?",
     "diverged: {detail}{checkpoint?; last good checkpoint {checkpoint}}"
     "{checkpoint_error?; last good checkpoint (could not be written: {checkpoint_error})}"},
    {message_code::internal_error, "error", "internal error: {error}"},
    // running: what holds the process's one run (a training run, a memory plan's probe, …).
    {message_code::run_in_progress, "running",
     "refused: {running} is already in progress in this process, which trains one run at a time (its memory "
     "counters, budget and threads are the process's); wait for it to end or stop it"},
    // ------------------------------------------- the out-of-memory suggestion
    {message_code::suggest_batch_one, "",
     "The micro-batch is already 1: raise --memory-budget or use a smaller model."},
    {message_code::suggest_halved,
     "suggested_batch_size, suggested_accumulation_steps, effective_batch, exact?",
     "Try micro-batch {suggested_batch_size} × {suggested_accumulation_steps} accumulation steps: effective batch "
     "{effective_batch} {exact?(the same)|(the nearest above)} with about half the activation memory."},
    // checkpointing: the suggestion turns gradient checkpointing on; why: a plan_*
    // code saying why this lever (plan_faster, …), with its arguments.
    {message_code::suggest_measured,
     "suggested_batch_size, suggested_accumulation_steps, effective_batch, exact?, measured_peak, checkpointing?, why?",
     "Try micro-batch {suggested_batch_size} × {suggested_accumulation_steps} accumulation steps"
     "{checkpointing? with gradient checkpointing}: effective batch "
     "{effective_batch} {exact?(the same)|(the nearest above)}, measured to fit: it peaked at {measured_peak} "
     "of the budget{why?; {@why}}."},
    {message_code::suggest_nothing_fits, "plan", "Measured: {@plan}."},
    {message_code::plan_predicted_too_big, "need, usable",
     "even micro-batch 1 is predicted to need {need}, more than {usable} (the budget less the safety margin); "
     "raise the budget or use a smaller model"},
    {message_code::plan_nothing_fits, "",
     "no micro-batch fits the budget; raise the budget or use a smaller model"},
    // faster_*: the pick, slower_*: the other lever's verified micro-batch × K;
    // ratio: the pick's median samples/s over the other's, rounded to what its
    // spread allows; spread: the range of the ratio over the planner's timing
    // rounds ("1.04–1.10", memory_planner.h); checkpointing: the pick uses it;
    // same: the spread includes 1, no difference was measured.
    {message_code::plan_faster,
     "faster_batch, faster_steps, slower_batch, slower_steps, ratio, spread?, checkpointing?, same?",
     "{same?{faster_batch} × {faster_steps} {checkpointing?with gradient checkpointing|without checkpointing} against "
     "{slower_batch} × {slower_steps} {checkpointing?without it|with it}: no measurable difference in speed "
     "({spread} ×, measured)|"
     "{faster_batch} × {faster_steps} {checkpointing?with gradient checkpointing runs {ratio} ×{spread? ({spread})} "
     "faster than {slower_batch} × {slower_steps} without it|fits without checkpointing and runs {ratio} ×"
     "{spread? ({spread})} faster than {slower_batch} × {slower_steps} with it} (measured)}"},
    {message_code::plan_checkpointing_no_larger, "faster_batch, faster_steps",
     "{faster_batch} × {faster_steps} fits without checkpointing, and checkpointing lets no larger micro-batch fit "
     "(it would only add a second forward)"},
    {message_code::plan_only_checkpointing, "",
     "only with gradient checkpointing does a micro-batch this large fit"},
    // -------------------------------------------------------- configuration
    // option: the first problem's option (without --); problem: its text; more:
    // the other problems, "--option: problem" joined by "; ".
    {message_code::invalid_configuration, "option, problem, more?", "--{option}: {problem}{more?; {more}}"},
    {message_code::config_error, "detail", "{detail}"},
    {message_code::device_unavailable, "device, no_cuda_build?",
     "--device: {device} was asked for, but "
     "{no_cuda_build?this build's LibTorch has no CUDA|no CUDA device is available}; use --device cpu or auto"},
    {message_code::device_missing, "device, count", "--device: {device} does not exist ({count} CUDA devices)"},
    {message_code::batch_larger_than_data, "batch_size, samples, dataset",
     "--batch-size: {batch_size} is larger than the {samples} training samples of {dataset}; use at most {samples}"},
    {message_code::output_dir_unusable, "error", "--output-dir: {error}"},
    // ------------------------------------------------------------ the run's files
    // path: the file or directory (a checkpoint's by its final name); reason: the
    // system's words (strerror, lower case); errno: ENOSPC, EIO, EROFS, ENOENT,
    // EACCES, … when it is one of those; action: writing, creating, renaming,
    // syncing or removing; to: a rename's target.
    {message_code::write_failed, "path, reason, errno?, action, to?", "{reason} while {action} {path}{to? to {to}}"},
    // ----------------------------------------------------------------- data
    {message_code::data_error, "detail", "{detail}"},
    {message_code::data_directory_missing, "path",
     "Fashion-MNIST directory {path} does not exist. Fashion-MNIST comes with Debian's package "
     "dataset-fashion-mnist (apt-get install dataset-fashion-mnist), or pass --data DIR with the four "
     "*-idx?-ubyte.gz files"},
    {message_code::data_file_missing, "path",
     "Fashion-MNIST file {path} is missing. Fashion-MNIST comes with Debian's package "
     "dataset-fashion-mnist (apt-get install dataset-fashion-mnist), or pass --data DIR with the four "
     "*-idx?-ubyte.gz files"},
    {message_code::data_cannot_open, "path, reason", "{path}: cannot open ({reason})"},
    {message_code::data_not_gzip, "path", "{path}: not a gzip file (bad magic bytes)"},
    {message_code::data_truncated, "path",
     "{path}: truncated gzip file (the data ends early); reinstall or download it again"},
    // problem: what is wrong, in English (an IDX header, a gzip stream, a CSV's shape).
    {message_code::data_corrupt, "path, problem", "{path}: {problem}"},
    {message_code::data_bad_line, "path, line, problem", "{path}:{line}: {problem}"},
    {message_code::csv_field_count, "path, line, expected, found",
     "{path}:{line}: expected {expected} fields, found {found}"},
    {message_code::csv_not_a_number, "path, line, column, value",
     "{path}:{line}: column '{column}' value '{value}' is not a number"},
    {message_code::csv_no_label_column, "path, line, column, columns",
     "{path}:{line}: no label column '{column}' in the header (columns: {columns}); choose one with --label-column"},
    // ----------------------------------------------------- several processes
    // rank: the rank that saw the failure; kind: peer-lost, timeout,
    // address-in-use, unreachable or failed; peer: the rank at fault, when
    // known; detail: the process group's English sentence (it names both, and
    // quotes c10d's or Gloo's own words); workers: what became of ranks 1 … N−1
    // started from the studio.
    {message_code::distributed_failure, "rank, kind, peer?, detail, workers?", "{detail}{workers? ({workers})}"},
    // processes: --nproc-per-node; program: where accum-run was looked for (may be empty).
    {message_code::worker_program_missing, "processes, program?",
     "--nproc-per-node {processes}: the program for ranks 1 … N−1 (accum-run) was not found{program? at {program}}"},
};
// clang-format on

// The row of `code`; nullptr for a code the table does not have.
const MessageTemplate* find_message_template(std::string_view code);

// The English text of `message`: its code's template with its arguments ("" for
// an unknown code; a missing argument renders as nothing).
std::string english_text(const EngineMessage& message);

// The template rendered with `args`, as english_text does (for the tests and
// for templates outside the table).
std::string render_template(std::string_view text, const std::map<std::string, std::string>& args);

inline EngineMessage make_message(std::string code, std::map<std::string, std::string> args = {}) {
    return EngineMessage{std::move(code), std::move(args)};
}

// Sets the summary's message from its code and arguments: detail and its English text.
inline void set_message(SummaryRecord& summary, EngineMessage message) {
    summary.detail = std::move(message);
    summary.message = english_text(summary.detail);
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later

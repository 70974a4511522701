#include "accum/planned_run.h"

#include <stdexcept>

#include "accum/engine_messages.h"
#include "accum/memory_planner.h"
#include "memory/out_of_memory.h"

namespace accum {

namespace {

// Forwards every record but the summary, which the planning layer completes
// before it is sent.
class HoldSummary final : public Sink {
public:
    explicit HoldSummary(Sink& inner) : inner_(inner) {}
    void on_micro_step(const MicroStepRecord& r) override { inner_.on_micro_step(r); }
    void on_step(const StepRecord& r) override { inner_.on_step(r); }
    void on_eval(const EvalRecord& r) override { inner_.on_eval(r); }
    void on_memory(const MemoryRecord& r) override { inner_.on_memory(r); }
    void on_log(const std::string& line) override { inner_.on_log(line); }
    void on_detail(const std::string& text) override { inner_.on_detail(text); }

private:
    Sink& inner_;
};

// The suggestion of micro-batch b × k for an effective batch that is `target` or the nearest above.
EngineMessage suggest(const char* code, std::int64_t b, std::int64_t k, std::int64_t target) {
    return make_message(code, {{"suggested_batch_size", std::to_string(b)},
                               {"suggested_accumulation_steps", std::to_string(k)},
                               {"effective_batch", std::to_string(b * k)},
                               {"exact", b * k == target ? "yes" : ""}});
}

// The suggestion an out-of-memory summary carries: a smaller micro-batch with
// more accumulation steps for the same effective batch, with or without
// gradient checkpointing. Under a configured budget it is measured, because a
// guess (half the micro-batch) can run out of memory again and the studio
// applies the suggestion in one click (an example: bench/STUDIO_MEASUREMENTS.md).
// Without a budget, or when measuring is cut short (a stop, a probe's failure,
// a plan that does not finish), the guess is half the micro-batch.
void advise_after_out_of_memory(const RunConfig& config, SummaryRecord& summary, Sink& sink,
                                const std::stop_token& stop) {
    const std::int64_t b = config.batch_size, k = config.accumulation_steps;
    const auto oom = summary.detail;
    if (b <= 1) {
        set_message(summary, with_suggestion(oom, make_message(message_code::suggest_batch_one)));
        return;
    }
    std::int64_t nb = (b + 1) / 2;
    while (nb > 1 && (b * k) % nb != 0) --nb; // keep micro-batch × K equal to the effective batch when it divides
    const std::int64_t nk = (b * k + nb - 1) / nb;
    summary.suggested_batch_size = nb;
    summary.suggested_accumulation_steps = nk;
    set_message(summary, with_suggestion(oom, suggest(message_code::suggest_halved, nb, nk, b * k)));
    const auto budget = parse_byte_size(config.memory_budget).value_or(0);
    if (budget <= 0 || stop.stop_requested()) return;

    const auto target = config.effective_batch();
    sink.on_log("out of memory: measuring which micro-batch reaches effective batch " + std::to_string(target) +
                " under the " + format_byte_size(budget) + " budget");
    const auto plan = plan_memory(
        config, target, budget, [&](const std::string& step) { sink.on_log("  " + step); },
        [&] { return stop.stop_requested(); });
    if (plan.verified) {
        summary.suggested_batch_size = plan.batch_size;
        summary.suggested_accumulation_steps = plan.accumulation_steps;
        summary.suggested_gradient_checkpointing = plan.gradient_checkpointing;
        auto measured = suggest(message_code::suggest_measured, plan.batch_size, plan.accumulation_steps, target);
        measured.args["measured_peak"] = format_byte_size(plan.verified_peak_bytes);
        if (plan.gradient_checkpointing) measured.args["checkpointing"] = "yes";
        if (!plan.why.code.empty()) { // why this lever: its code and its arguments
            measured.args.insert(plan.why.args.begin(), plan.why.args.end());
            measured.args["why"] = plan.why.code;
        }
        set_message(summary, with_suggestion(oom, measured));
    } else if (plan.nothing_fits) {
        summary.suggested_batch_size = 0;
        summary.suggested_accumulation_steps = 0;
        auto nothing_fits = make_message(message_code::suggest_nothing_fits, plan.reason.args);
        nothing_fits.args["plan"] = plan.reason.code;
        set_message(summary, with_suggestion(oom, nothing_fits));
    }
}

// An attempt that ran out of memory, as find_executable_batch_size recognises
// one (its message says "out of memory").
struct OutOfMemoryRetry : std::runtime_error {
    using std::runtime_error::runtime_error;
};

bool ended_well(const SummaryRecord& summary) {
    return summary.status == RunStatus::Completed || summary.status == RunStatus::Stopped;
}

// --auto-find-batch-size: runs until a micro-batch fits, K raised to keep the
// effective batch (at least) the same.
SummaryRecord run_finding_batch_size(Session& session, const RunConfig& config, Sink& sink,
                                     const std::stop_token& stop) {
    const std::int64_t effective = config.effective_batch();
    auto k_for = [effective](std::int64_t batch) { return (effective + batch - 1) / batch; };
    RunConfig attempt = config;
    SummaryRecord summary;
    try {
        find_executable_batch_size(
            [&](std::int64_t batch) {
                attempt.batch_size = batch;
                attempt.accumulation_steps = k_for(batch);
                summary = session.run(attempt, sink, stop);
                if (summary.status == RunStatus::OutOfMemory && !stop.stop_requested())
                    throw OutOfMemoryRetry(summary.message);
            },
            config.batch_size,
            [&](std::int64_t batch, const std::string&) {
                const std::int64_t k = k_for(batch);
                sink.on_log("auto_find_batch_size: out of memory; retrying with micro-batch " + std::to_string(batch) +
                            " × " + std::to_string(k) + " accumulation steps (effective batch " +
                            std::to_string(batch * k) +
                            (batch * k == effective ? ", unchanged)" : ", the nearest above " + std::to_string(effective) + ")"));
            });
        if (attempt.batch_size != config.batch_size && ended_well(summary)) {
            auto message = summary.detail;
            message.args["auto_batch_size"] = std::to_string(attempt.batch_size);
            message.args["auto_accumulation_steps"] = std::to_string(attempt.accumulation_steps);
            set_message(summary, std::move(message));
        }
    } catch (const std::runtime_error& e) { // reached zero
        if (summary.detail.code == message_code::out_of_memory) {
            auto message = summary.detail;
            message.args["reached_zero"] = "yes";
            set_message(summary, std::move(message));
        } else {
            summary.message = std::string(e.what()) + " " + summary.message;
        }
    }
    return summary;
}

} // namespace

SummaryRecord run_planned(Session& session, const RunConfig& config, Sink& sink, std::stop_token stop) {
    HoldSummary held(sink);
    SummaryRecord summary;
    if (config.auto_find_batch_size && config.world_size() <= 1) {
        summary = run_finding_batch_size(session, config, held, stop);
    } else {
        summary = session.run(config, held, stop);
        if (summary.status == RunStatus::OutOfMemory && config.world_size() <= 1)
            advise_after_out_of_memory(config, summary, held, stop);
    }
    sink.on_summary(summary);
    return summary;
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later

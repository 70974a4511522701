#include "accum/memory_planner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>

#include <nlohmann/json.hpp>

#include "accum/engine_messages.h"
#include "accum/run_estimate.h"
#include "accum/session.h"
#include "other_load.h"

namespace accum {

namespace {

// Keeps the step records of a timed run and stops it once enough updates after
// its warm-up are timed (memory_planner.h: kMinTimedSteps, kMinTimedSeconds, …).
struct StepTimes : Sink {
    explicit StepTimes(int warmup) : warmup(warmup) {}
    int warmup;
    std::vector<StepRecord> steps;
    std::stop_source stop;
    bool stopped_here = false;
    void on_step(const StepRecord& r) override {
        steps.push_back(r);
        const int timed = static_cast<int>(steps.size()) - 1 - warmup;
        if (timed < 3) return;
        const double seconds = steps.back().elapsed_s - steps[static_cast<std::size_t>(warmup)].elapsed_s;
        if ((timed >= kMinTimedSteps && seconds >= kMinTimedSeconds) || seconds >= kMaxTimedSeconds) {
            stopped_here = true;
            stop.request_stop();
        }
    }
    // Each timed update's samples/s.
    std::vector<double> rates() const {
        std::vector<double> out;
        for (std::size_t i = static_cast<std::size_t>(warmup) + 1; i < steps.size(); ++i) {
            const double dt = steps[i].elapsed_s - steps[i - 1].elapsed_s;
            const auto samples = steps[i].samples_seen - steps[i - 1].samples_seen;
            if (dt > 0 && samples > 0) out.push_back(static_cast<double>(samples) / dt);
        }
        return out;
    }
};

double quantile(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const double at = q * static_cast<double>(v.size() - 1);
    const auto i = static_cast<std::size_t>(std::floor(at));
    const std::size_t j = std::min(i + 1, v.size() - 1);
    return v[i] + (at - static_cast<double>(i)) * (v[j] - v[i]);
}

// The share of all CPUs' time that other processes took since it was made
// (other_load.h); 0 where /proc is not readable.
class OthersShare {
public:
    double share() {
        const double cores = meter_.take();
        const double cpus = std::max(1u, std::thread::hardware_concurrency());
        return std::isnan(cores) ? 0.0 : std::max(0.0, cores / cpus);
    }

private:
    OtherLoadMeter meter_;
};

// The base config for one lever, as a short run without files or pace.
RunConfig probe_config(const RunConfig& base, std::int64_t batch, std::int64_t k, bool checkpointing) {
    RunConfig c = for_measurement(base);
    c.batch_size = batch;
    c.accumulation_steps = k;
    c.gradient_checkpointing = checkpointing;
    c.auto_find_batch_size = false;
    c.epochs = 0;
    // Enough updates to time after the warm-up; StepTimes stops the run earlier.
    c.max_steps = kVerifyWarmupSteps + 1 + 60;
    c.eval_strategy = Strategy::No;
    c.eval_steps = 0;
    c.save_strategy = Strategy::No;
    c.save_steps = 0;
    return c;
}

// A run under the budget, timed: the samples/s of each update after the warm-up
// (`warmup` updates, and the first update's own start). A run the timing stopped
// counts as completed: it ran under the budget for every update it made.
// `others`: the share of the machine other processes took meanwhile (OthersShare).
SummaryRecord timed_run(const RunConfig& config, std::int64_t budget, int warmup, std::vector<double>& rates,
                        double& others) {
    RunConfig c = config;
    c.memory_budget = std::to_string(budget); // one process's, as probe_config made it
    StepTimes sink(warmup);
    Session session; // one run as it trains: no advice, no retries (it is the planner's)
    OthersShare machine;
    auto summary = session.run(c, sink, sink.stop.get_token());
    others = machine.share();
    if (summary.status == RunStatus::Stopped && sink.stopped_here) summary.status = RunStatus::Completed;
    rates = sink.rates();
    if (rates.empty() && summary.samples_per_second > 0) rates.push_back(summary.samples_per_second);
    return summary;
}

double median(const std::vector<double>& v) { return quantile(v, 0.5); }

std::string times(std::int64_t b, std::int64_t k) { return std::to_string(b) + " × " + std::to_string(k); }

std::string number_text(double x, int decimals) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
    return buf;
}

int ratio_decimals(double low, double high) {
    const double half_width = (high - low) / 2;
    if (!(half_width > 0)) return 2;
    return std::clamp(-static_cast<int>(std::floor(std::log10(half_width))), 0, 2);
}

} // namespace

MemoryPlan plan_memory(const RunConfig& base, std::int64_t target, std::int64_t budget,
                       const std::function<void(const std::string&)>& progress,
                       const std::function<bool()>& cancelled) {
    MemoryPlan plan;
    plan.target_batch = target;
    plan.budget_bytes = budget;
    auto stop_here = [&] {
        if (!cancelled || !cancelled()) return false;
        plan.message = "cancelled";
        return true;
    };
    const double usable = (1.0 - plan.safety_margin) * static_cast<double>(budget);
    // Candidates, best first: the largest divisor of the target that fits (exact),
    // unless it wastes more than half the room, then the largest that fits (K rounded up).
    auto choose = [&](std::int64_t limit) {
        std::int64_t divisor = 1;
        for (std::int64_t b = limit; b >= 1; --b)
            if (target % b == 0) {
                divisor = b;
                break;
            }
        return divisor * 2 >= limit ? divisor : limit;
    };
    std::vector<RunMemoryEstimate> estimates;
    std::vector<double> too_big_at_one; // per lever: what micro-batch 1 is predicted to need when it does not fit, else 0
    for (const bool checkpointing : {false, true}) {
        PlanCandidate candidate;
        candidate.gradient_checkpointing = checkpointing;
        const std::string lever = checkpointing ? "with gradient checkpointing" : "without gradient checkpointing";
        const auto probe = probe_config(base, target, 1, checkpointing);
        // A lever the configuration does not allow (checkpointing a TorchScript
        // module, which the engine cannot recompute in blocks) is not planned with.
        if (checkpointing) {
            const auto refused = validate(probe);
            if (!refused.empty()) {
                if (progress) progress("no plan " + lever + ": " + refused.front().to_string());
                break;
            }
        }
        if (stop_here()) return plan;
        if (progress) progress("probing the activations " + lever);
        const RunMemoryEstimate e = estimate_run_memory(probe, cancelled);
        if (e.cancelled) {
            plan.message = "cancelled";
            return plan;
        }
        if (!e.ok) {
            plan.message = "probing the activations " + lever + " failed: " + e.error;
            return plan;
        }
        estimates.push_back(e);
        candidate.fixed_bytes = static_cast<double>(e.static_bytes()) + e.activation_fixed_bytes;
        candidate.bytes_per_sample = e.activation_per_sample_bytes;
        // The least peak any accumulated run has (the fitted activations never fall with B).
        const double peak_at_one = e.peak_at(1, 2);
        std::int64_t largest = target;
        if (budget > 0) {
            if (peak_at_one > usable)
                largest = 0;
            else if (e.activation_per_sample_bytes > 0)
                largest = std::min<std::int64_t>(
                    target, static_cast<std::int64_t>(std::floor(
                                (usable - static_cast<double>(e.static_bytes()) - e.activation_fixed_bytes) /
                                e.activation_per_sample_bytes)));
        }
        // A .pt2 step at K = 1 holds no second copy of the gradients it returns: the
        // target as one micro-batch can fit where no smaller one with K >= 2 would.
        if (budget > 0 && e.returned_gradient_bytes > 0 && e.peak_at(target, 1) <= usable) largest = target;
        too_big_at_one.push_back(largest < 1 ? peak_at_one : 0.0);
        if (largest < 1) {
            candidate.note = "even micro-batch 1 is predicted to need " +
                             format_byte_size(static_cast<std::int64_t>(peak_at_one)) + ", more than " +
                             format_byte_size(static_cast<std::int64_t>(usable)) + " (the budget less the safety margin)";
            plan.candidates.push_back(candidate);
            continue;
        }
        // Checkpointing costs a second forward of its blocks: it is worth measuring
        // only when it lets a larger micro-batch fit than without it.
        if (checkpointing && !plan.candidates.empty()) {
            const auto& plain = plan.candidates.front();
            if (plain.verified && plain.batch_size >= choose(largest)) {
                candidate.batch_size = choose(largest);
                candidate.accumulation_steps = (target + candidate.batch_size - 1) / candidate.batch_size;
                candidate.predicted_peak_bytes = e.peak_at(candidate.batch_size, candidate.accumulation_steps);
                candidate.note = "lets no larger micro-batch fit than " + times(plain.batch_size, plain.accumulation_steps) +
                                 " without it, and would add a second forward of each block";
                plan.candidates.push_back(candidate);
                continue;
            }
        }
        for (std::int64_t limit = largest; limit >= 1;) {
            const std::int64_t b = choose(limit);
            const std::int64_t k = (target + b - 1) / b;
            if (stop_here()) return plan;
            if (progress) progress("verifying micro-batch " + times(b, k) + " " + lever + " under the budget");
            std::vector<double> rates;
            const auto s =
                timed_run(probe_config(base, b, k, checkpointing), budget, kVerifyWarmupSteps, rates, candidate.others_share);
            candidate.samples_per_second = median(rates);
            candidate.timed_steps = static_cast<int>(rates.size());
            candidate.batch_size = b;
            candidate.accumulation_steps = k;
            candidate.predicted_peak_bytes = e.peak_at(b, k);
            if (s.status == RunStatus::Completed) {
                candidate.verified = true;
                candidate.verified_peak_bytes = s.peak_memory_bytes;
                break;
            }
            if (s.status != RunStatus::OutOfMemory) {
                plan.message = "verifying micro-batch " + times(b, k) + " " + lever + " failed: " + s.message;
                return plan;
            }
            candidate.note = "micro-batch " + times(b, k) + " ran out of memory";
            limit = b - 1; // the prediction was optimistic: step down once and verify again
        }
        plan.candidates.push_back(candidate);
    }

    // Both levers verified: time them again, alternately, in the same process (warm
    // now), so that both see the same machine; each round gives one ratio, and
    // the range of the rounds' ratios is what the message states. A round in which
    // other processes took more than kDisturbedShare of the machine is run again
    // while the time allows (memory_planner.h); the disturbed ones count only when
    // no round ran undisturbed.
    struct Round {
        double ratio = 0;   // the first verified candidate's samples/s over the second's
        double others = 0;  // the larger share other processes took in its two runs
        std::vector<double> rates[2];
    };
    std::vector<Round> rounds;
    std::vector<std::size_t> timed;
    for (std::size_t i = 0; i < plan.candidates.size(); ++i)
        if (plan.candidates[i].verified) timed.push_back(i);
    if (timed.size() == 2) {
        const auto& x = plan.candidates[timed[0]];
        const auto& y = plan.candidates[timed[1]];
        Round verification; // the verification runs: a ratio, their updates already counted
        verification.ratio = y.samples_per_second > 0 ? x.samples_per_second / y.samples_per_second : 0;
        verification.others = std::max(x.others_share, y.others_share);
        rounds.push_back(verification);
        int clean = 0;
        const auto rounds_started = std::chrono::steady_clock::now();
        for (int round = 0; clean < kTimingRounds && round < kTimingAttempts; ++round) {
            const double spent =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - rounds_started).count();
            if (round > 0 && spent > kTimingBudgetSeconds) break;
            Round r;
            double rate[2] = {0, 0};
            for (int n = 0; n < 2; ++n) {
                const int which = round % 2 == 0 ? 1 - n : n; // B, A, then A, B, …: drift falls on both
                const auto& c = plan.candidates[timed[static_cast<std::size_t>(which)]];
                if (stop_here()) return plan;
                if (progress)
                    progress("timing micro-batch " + times(c.batch_size, c.accumulation_steps) +
                             (c.gradient_checkpointing ? " with" : " without") + " gradient checkpointing, round " +
                             std::to_string(clean + 1) + " of " + std::to_string(kTimingRounds) +
                             (round > clean ? " (again: the machine was busy)" : ""));
                double others = 0;
                const auto s = timed_run(probe_config(base, c.batch_size, c.accumulation_steps, c.gradient_checkpointing),
                                         budget, kTimingWarmupSteps, r.rates[which], others);
                if (s.status != RunStatus::Completed) {
                    plan.message = "timing micro-batch " + times(c.batch_size, c.accumulation_steps) + " failed: " +
                                   s.message;
                    return plan;
                }
                rate[which] = median(r.rates[which]);
                r.others = std::max(r.others, others);
            }
            r.ratio = rate[1] > 0 ? rate[0] / rate[1] : 0;
            if (r.others <= kDisturbedShare) ++clean;
            rounds.push_back(std::move(r));
        }
        // What counts: the undisturbed rounds (the verification runs among them when
        // they were), else every round.
        const bool any_clean = std::any_of(rounds.begin() + 1, rounds.end(),
                                           [](const Round& r) { return r.others <= kDisturbedShare; });
        std::vector<Round> counted;
        for (auto& r : rounds)
            if (!any_clean || r.others <= kDisturbedShare) counted.push_back(std::move(r));
        rounds = std::move(counted);
        plan.timing_others_share = 0;
        for (std::size_t w = 0; w < 2; ++w) {
            auto& c = plan.candidates[timed[w]];
            std::vector<double> all;
            for (const auto& r : rounds) all.insert(all.end(), r.rates[w].begin(), r.rates[w].end());
            c.samples_per_second = median(all);
            c.samples_per_second_low = quantile(all, 0.25);
            c.samples_per_second_high = quantile(all, 0.75);
            c.timed_steps += static_cast<int>(all.size());
        }
        for (const auto& r : rounds) plan.timing_others_share = std::max(plan.timing_others_share, r.others);
    }

    // The fastest verified candidate.
    const PlanCandidate* pick = nullptr;
    for (const auto& c : plan.candidates)
        if (c.verified && (!pick || c.samples_per_second > pick->samples_per_second)) pick = &c;
    if (!pick) {
        plan.nothing_fits = true;
        // Predicted too big with either lever: say what the leaner one needs at micro-batch 1.
        if (std::all_of(too_big_at_one.begin(), too_big_at_one.end(), [](double need) { return need > 0; }) &&
            !too_big_at_one.empty())
            plan.reason = make_message(
                message_code::plan_predicted_too_big,
                {{"need", format_byte_size(static_cast<std::int64_t>(
                              *std::min_element(too_big_at_one.begin(), too_big_at_one.end())))},
                 {"usable", format_byte_size(static_cast<std::int64_t>(usable))}});
        else
            plan.reason = make_message(message_code::plan_nothing_fits);
        plan.message = english_text(plan.reason);
        return plan;
    }
    const auto& e = estimates[pick->gradient_checkpointing ? estimates.size() - 1 : 0];
    for (const auto& p : e.probes)
        plan.measurements.push_back({p.batch_size, e.static_bytes() + p.activation_bytes});
    plan.fixed_bytes = pick->fixed_bytes;
    plan.bytes_per_sample = pick->bytes_per_sample;
    plan.static_bytes = e.static_bytes();
    plan.frozen_parameters_bytes = e.frozen_parameters_bytes;
    plan.feasible = true;
    plan.verified = true;
    plan.batch_size = pick->batch_size;
    plan.accumulation_steps = pick->accumulation_steps;
    plan.gradient_checkpointing = pick->gradient_checkpointing;
    plan.effective_batch = pick->batch_size * pick->accumulation_steps;
    plan.exact = plan.effective_batch == target;
    plan.predicted_peak_bytes = pick->predicted_peak_bytes;
    plan.process_bytes = e.process_at(pick->batch_size, pick->accumulation_steps);
    plan.verified_peak_bytes = pick->verified_peak_bytes;

    const PlanCandidate* other = nullptr;
    for (const auto& c : plan.candidates)
        if (&c != pick) other = &c;
    if (other && other->verified) {
        // The pick's median samples/s over the other's, and the range of the rounds'
        // ratios (which holds it): what another planning of the same configuration
        // is expected to find.
        auto over = [](double a, double b) { return b > 0 ? a / b : 0.0; };
        plan.ratio = over(pick->samples_per_second, other->samples_per_second);
        plan.ratio_low = plan.ratio_high = plan.ratio;
        const bool pick_first = timed.size() == 2 && pick == &plan.candidates[timed[0]];
        for (const auto& round : rounds) {
            const double r = round.ratio;
            if (r <= 0) continue;
            const double mine = pick_first ? r : over(1, r);
            plan.ratio_low = std::min(plan.ratio_low, mine);
            plan.ratio_high = std::max(plan.ratio_high, mine);
        }
        // And what the updates themselves spread over: the pick's quartiles against
        // the other's (a busy machine's uneven updates widen it, where two rounds
        // may agree by chance).
        if (pick->samples_per_second_low > 0 && other->samples_per_second_low > 0) {
            plan.ratio_low = std::min(plan.ratio_low, over(pick->samples_per_second_low, other->samples_per_second_high));
            plan.ratio_high = std::max(plan.ratio_high, over(pick->samples_per_second_high, other->samples_per_second_low));
        }
        const int decimals = ratio_decimals(plan.ratio_low, plan.ratio_high);
        plan.why = make_message(message_code::plan_faster,
                                {{"faster_batch", std::to_string(pick->batch_size)},
                                 {"faster_steps", std::to_string(pick->accumulation_steps)},
                                 {"slower_batch", std::to_string(other->batch_size)},
                                 {"slower_steps", std::to_string(other->accumulation_steps)},
                                 {"ratio", ratio_text(plan.ratio, plan.ratio_low, plan.ratio_high)},
                                 {"spread", number_text(plan.ratio_low, decimals) + "–" +
                                                number_text(plan.ratio_high, decimals)},
                                 {"checkpointing", pick->gradient_checkpointing ? "yes" : ""},
                                 {"same", plan.ratio_low <= 1.0 && 1.0 <= plan.ratio_high ? "yes" : ""}});
    } else if (other && other->gradient_checkpointing && other->batch_size > 0) {
        plan.why = make_message(message_code::plan_checkpointing_no_larger,
                                {{"faster_batch", std::to_string(pick->batch_size)},
                                 {"faster_steps", std::to_string(pick->accumulation_steps)}});
    } else if (other && !other->gradient_checkpointing) {
        plan.why = make_message(message_code::plan_only_checkpointing);
    }
    plan.message = "micro-batch " + times(pick->batch_size, pick->accumulation_steps) + " accumulation steps" +
                   (pick->gradient_checkpointing ? " with gradient checkpointing" : "") + " = effective batch " +
                   std::to_string(plan.effective_batch) +
                   (plan.exact ? " (the target)" : " (the nearest above the target " + std::to_string(target) + ")") +
                   "; predicted peak " + format_byte_size(static_cast<std::int64_t>(plan.predicted_peak_bytes)) +
                   ", measured " + format_byte_size(plan.verified_peak_bytes) + " of the " + format_byte_size(budget) +
                   " budget; the whole process " + format_byte_size(static_cast<std::int64_t>(plan.process_bytes)) +
                   " of host memory, checkpoints included" +
                   (plan.why.code.empty() ? "" : "; " + english_text(plan.why));
    if (plan.frozen_parameters_bytes > 0)
        plan.message += "; frozen weights " + format_byte_size(plan.frozen_parameters_bytes) + " of the fixed " +
                        format_byte_size(plan.static_bytes) + " (no gradients, no optimizer state): what accumulation "
                        "shrinks is the activations, " +
                        format_byte_size(static_cast<std::int64_t>(plan.bytes_per_sample)) + " per sample";
    return plan;
}

std::string ratio_text(double ratio, double low, double high) {
    return number_text(ratio, ratio_decimals(low, high));
}

std::string to_json_text(const MemoryPlan& p) {
    using nlohmann::json;
    json m = json::array();
    for (const auto& x : p.measurements) m.push_back({{"batch_size", x.batch_size}, {"peak_memory_bytes", x.peak_bytes}});
    json candidates = json::array();
    for (const auto& c : p.candidates)
        candidates.push_back({{"gradient_checkpointing", c.gradient_checkpointing},
                              {"fit", {{"fixed_bytes", c.fixed_bytes}, {"bytes_per_sample", c.bytes_per_sample}}},
                              {"batch_size", c.batch_size},
                              {"accumulation_steps", c.accumulation_steps},
                              {"predicted_peak_bytes", c.predicted_peak_bytes},
                              {"verified", c.verified},
                              {"verified_peak_bytes", c.verified_peak_bytes},
                              {"samples_per_second", c.samples_per_second},
                              {"samples_per_second_quartiles", {c.samples_per_second_low, c.samples_per_second_high}},
                              {"timed_steps", c.timed_steps},
                              {"others_share", c.others_share},
                              {"note", c.note}});
    json j{{"feasible", p.feasible},
           {"target_batch", p.target_batch},
           {"memory_budget_bytes", p.budget_bytes},
           {"safety_margin", p.safety_margin},
           {"measurements", m},
           {"fit", {{"fixed_bytes", p.fixed_bytes}, {"bytes_per_sample", p.bytes_per_sample}}},
           {"candidates", candidates},
           {"batch_size", p.batch_size},
           {"accumulation_steps", p.accumulation_steps},
           {"gradient_checkpointing", p.gradient_checkpointing},
           {"effective_batch", p.effective_batch},
           {"exact", p.exact},
           {"predicted_peak_bytes", p.predicted_peak_bytes},
           {"process_bytes", p.process_bytes},
           {"static_bytes", p.static_bytes},
           {"frozen_parameters_bytes", p.frozen_parameters_bytes},
           {"verified", p.verified},
           {"verified_peak_bytes", p.verified_peak_bytes},
           {"ratio", {{"median", p.ratio}, {"low", p.ratio_low}, {"high", p.ratio_high}}},
           {"timing_others_share", p.timing_others_share},
           {"why", p.why.code.empty() ? std::string() : english_text(p.why)},
           {"message", p.message}};
    return j.dump(2) + "\n";
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later

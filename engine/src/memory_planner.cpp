#include "accum/memory_planner.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "accum/engine_messages.h"
#include "accum/session.h"

namespace accum {

namespace {

struct SummaryOnly : Sink {};

thread_local int probes_running = 0; // plan_memory's probe runs on this thread

SummaryRecord run_probe(const RunConfig& base, std::int64_t batch, std::int64_t k, std::int64_t budget) {
    RunConfig c = base;
    c.batch_size = batch;
    c.accumulation_steps = k;
    c.epochs = 0;
    c.max_steps = 2;
    c.eval_strategy = Strategy::No;
    c.save_strategy = Strategy::No;
    c.output_dir.clear();
    c.metrics_file.clear();
    c.resume_from.clear();
    c.record_micro_steps = false;
    c.micro_step_delay_s = 0;
    c.memory_budget = std::to_string(budget);
    SummaryOnly sink;
    Session session;
    struct Probing {
        Probing() { ++probes_running; }
        ~Probing() { --probes_running; }
    } probing;
    return session.run(c, sink);
}

} // namespace

bool measuring_memory() { return probes_running > 0; }

MemoryPlan plan_memory(const RunConfig& base, std::int64_t target, std::int64_t budget,
                       const std::function<void(const std::string&)>& progress,
                       const std::function<bool()>& cancelled) {
    MemoryPlan plan;
    plan.target_batch = target;
    plan.budget_bytes = budget;
    // Measure at up to four micro-batch sizes (no budget, K = 1, two steps each).
    std::vector<std::int64_t> sizes;
    for (std::int64_t b = std::min<std::int64_t>(8, target); b <= target && sizes.size() < 4; b *= 2) sizes.push_back(b);
    if (sizes.empty()) sizes.push_back(target);
    auto stop_here = [&] {
        if (!cancelled || !cancelled()) return false;
        plan.message = "cancelled";
        return true;
    };
    for (const auto b : sizes) {
        if (stop_here()) return plan;
        if (progress) progress("measuring peak memory at micro-batch " + std::to_string(b));
        const auto s = run_probe(base, b, 1, 0);
        if (s.status != RunStatus::Completed) {
            plan.message = "measuring micro-batch " + std::to_string(b) + " failed: " + s.message;
            return plan;
        }
        plan.measurements.push_back({b, s.peak_memory_bytes});
    }
    // Least-squares line through the measurements.
    const double n = static_cast<double>(plan.measurements.size());
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (const auto& m : plan.measurements) {
        sx += m.batch_size;
        sy += static_cast<double>(m.peak_bytes);
        sxx += static_cast<double>(m.batch_size) * m.batch_size;
        sxy += static_cast<double>(m.batch_size) * static_cast<double>(m.peak_bytes);
    }
    const double denom = n * sxx - sx * sx;
    plan.bytes_per_sample = denom > 0 ? std::max(1.0, (n * sxy - sx * sy) / denom) : sy / std::max(1.0, sx);
    plan.fixed_bytes = std::max(0.0, (sy - plan.bytes_per_sample * sx) / n);

    const double usable = (1.0 - plan.safety_margin) * static_cast<double>(budget);
    auto predict = [&](std::int64_t b) { return plan.fixed_bytes + plan.bytes_per_sample * static_cast<double>(b); };
    std::int64_t largest = budget <= 0 ? target
                                       : static_cast<std::int64_t>(std::floor((usable - plan.fixed_bytes) / plan.bytes_per_sample));
    largest = std::min(largest, target);
    if (largest < 1) {
        plan.nothing_fits = true;
        plan.reason = make_message(message_code::plan_predicted_too_big,
                                   {{"need", format_byte_size(static_cast<std::int64_t>(predict(1)))},
                                    {"usable", format_byte_size(static_cast<std::int64_t>(usable))}});
        plan.message = english_text(plan.reason);
        return plan;
    }

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
    for (std::int64_t limit = largest; limit >= 1;) {
        const std::int64_t b = choose(limit);
        const std::int64_t k = (target + b - 1) / b;
        if (stop_here()) return plan;
        if (progress) progress("verifying micro-batch " + std::to_string(b) + " × " + std::to_string(k) + " under the budget");
        const auto s = run_probe(base, b, k, budget);
        if (s.status == RunStatus::Completed) {
            plan.feasible = true;
            plan.verified = true;
            plan.batch_size = b;
            plan.accumulation_steps = k;
            plan.effective_batch = b * k;
            plan.exact = b * k == target;
            plan.predicted_peak_bytes = predict(b);
            plan.verified_peak_bytes = s.peak_memory_bytes;
            plan.message = "micro-batch " + std::to_string(b) + " × " + std::to_string(k) +
                           " accumulation steps = effective batch " + std::to_string(b * k) +
                           (plan.exact ? " (the target)" : " (the nearest above the target " + std::to_string(target) + ")") +
                           "; predicted peak " + format_byte_size(static_cast<std::int64_t>(predict(b))) +
                           ", measured " + format_byte_size(s.peak_memory_bytes) + " of the " +
                           format_byte_size(budget) + " budget";
            return plan;
        }
        if (s.status != RunStatus::OutOfMemory) {
            plan.message = "verifying micro-batch " + std::to_string(b) + " failed: " + s.message;
            return plan;
        }
        limit = b - 1; // the prediction was optimistic: step down once and verify again
    }
    plan.nothing_fits = true;
    plan.reason = make_message(message_code::plan_nothing_fits);
    plan.message = english_text(plan.reason);
    return plan;
}

std::string to_json_text(const MemoryPlan& p) {
    nlohmann::json m = nlohmann::json::array();
    for (const auto& x : p.measurements) m.push_back({{"batch_size", x.batch_size}, {"peak_memory_bytes", x.peak_bytes}});
    nlohmann::json j{{"feasible", p.feasible},
                     {"target_batch", p.target_batch},
                     {"memory_budget_bytes", p.budget_bytes},
                     {"safety_margin", p.safety_margin},
                     {"measurements", m},
                     {"fit", {{"fixed_bytes", p.fixed_bytes}, {"bytes_per_sample", p.bytes_per_sample}}},
                     {"batch_size", p.batch_size},
                     {"accumulation_steps", p.accumulation_steps},
                     {"effective_batch", p.effective_batch},
                     {"exact", p.exact},
                     {"predicted_peak_bytes", p.predicted_peak_bytes},
                     {"verified", p.verified},
                     {"verified_peak_bytes", p.verified_peak_bytes},
                     {"message", p.message}};
    return j.dump(2) + "\n";
}

} // namespace accum

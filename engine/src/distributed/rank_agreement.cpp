// SPDX-License-Identifier: GPL-3.0-or-later
#include "distributed/rank_agreement.h"

#include <algorithm>
#include <thread>

#include <nlohmann/json.hpp>

#include "accum/errors.h"
#include "distributed/gradient_sync.h"

namespace accum::dist {

namespace {

// FNV-1a over `text`: the same on every machine, unlike std::hash.
std::uint64_t fingerprint(const std::string& text) {
    std::uint64_t h = 1469598103934665603ull;
    for (const unsigned char c : text) h = (h ^ c) * 1099511628211ull;
    return h;
}

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
    &MemoryRecord::interval_peak_bytes,   &MemoryRecord::peak_parameters_bytes,
    &MemoryRecord::peak_gradients_bytes,  &MemoryRecord::peak_optimizer_state_bytes,
    &MemoryRecord::peak_activations_bytes, &MemoryRecord::peak_optimizer_step_bytes,
    &MemoryRecord::frozen_parameters_bytes,
};
constexpr std::size_t kMemoryFloats = 2 * std::size(kRankMemoryFields);

// Values at the head of what rides with a sync: the window's loss sum (hi, lo),
// its divisor (hi, lo), stop and pause requests; then each rank's memory figures.
enum Head { LossHi, LossLo, DivisorHi, DivisorLo, Stop, Pause, HeadSize };

// The options in which the ranks differ, by name (" (--batch-size differs)"),
// when the shared options are a JSON object with the same keys on every rank
// (the option table's names); empty when that cannot be told. Every rank calls
// it after the ranks disagreed (so all do): two collectives, the keys' names
// agreed first, then one fingerprint per value.
std::string differing_options(ProcessGroup& group, const std::string& shared_options) {
    nlohmann::json options = nlohmann::json::parse(shared_options, nullptr, false);
    std::string names;
    std::vector<std::uint64_t> values;
    if (options.is_object())
        for (const auto& item : options.items()) {
            names += item.key() + "\n";
            values.push_back(fingerprint(item.value().dump()));
        }
    if (!group.all_agree(fingerprint(names)) || names.empty()) return {};
    const auto same = group.agree(values);
    std::string which;
    std::size_t i = 0, count = 0;
    for (const auto& item : options.items())
        if (!same[i++]) which += (count++ > 0 ? ", --" : "--") + item.key();
    return count == 0 ? std::string() : " (" + which + (count > 1 ? " differ)" : " differs)");
}

} // namespace

RankAgreement::RankAgreement(DistributedState& state, RankHooks hooks)
    : state_(state), hooks_(std::move(hooks)), rank_memory_(static_cast<std::size_t>(state.world_size())) {}

RankAgreement::~RankAgreement() {
    state_.set_passenger(nullptr);
}

bool RankAgreement::join(const std::string& shared_options, bool writes_checkpoints,
                         const std::vector<torch::Tensor>& model_state) {
    auto& group = state_.group();
    if (!group.all_agree(fingerprint(shared_options)))
        throw ConfigError("the " + std::to_string(world_size()) + " processes were started with different options" +
                          differing_options(group, shared_options) +
                          "; every rank must train the same configuration (compare their command lines)");
    const double writes = rank() == 0 && writes_checkpoints ? 1.0 : 0.0;
    const bool rank0_writes = group.all_reduce(std::vector<double>{writes}, ReduceOp::Max)[0] > 0;
    broadcast_tensors(group, model_state);
    state_.set_passenger(this);
    return rank0_writes;
}

std::vector<float> RankAgreement::board(const MicroBatchPart& current) {
    const auto [total, divisor] = hooks_.window_with(current);
    std::vector<float> v(HeadSize + kMemoryFloats * rank_memory_.size(), 0.0f);
    split(total, v[LossHi], v[LossLo]);
    split(divisor, v[DivisorHi], v[DivisorLo]);
    v[Stop] = hooks_.stop_requested() ? 1.0f : 0.0f;
    v[Pause] = hooks_.paused() ? 1.0f : 0.0f;
    if (std::chrono::steady_clock::now() - own_memory_at_ >= std::chrono::milliseconds(200))
        set_own_memory(hooks_.memory_now());
    float* slot = v.data() + HeadSize + kMemoryFloats * static_cast<std::size_t>(rank());
    for (const auto field : kRankMemoryFields) {
        split_bytes(own_memory_.*field, slot[0], slot[1]);
        slot += 2;
    }
    return v;
}

void RankAgreement::alight(const std::vector<float>& sums) {
    const double divisor = static_cast<double>(sums[DivisorHi]) + sums[DivisorLo];
    window_loss_ = divisor > 0 ? (static_cast<double>(sums[LossHi]) + sums[LossLo]) / divisor : 0.0;
    stop_agreed_ = stop_agreed_ || sums[Stop] > 0;
    pause_agreed_ = sums[Pause] > 0;
    for (std::size_t r = 0; r < rank_memory_.size(); ++r) {
        if (static_cast<int>(r) == rank()) continue;
        const float* slot = sums.data() + HeadSize + kMemoryFloats * r;
        MemoryRecord m = own_memory_;
        bool any = false;
        for (const auto field : kRankMemoryFields) {
            m.*field = join_bytes(slot[0], slot[1]);
            any = any || m.*field > 0;
            slot += 2;
        }
        m.rank = static_cast<int>(r);
        if (any) rank_memory_[r] = m;
    }
}

bool RankAgreement::proceed() {
    while (!stop_agreed_ && pause_agreed_) {
        const bool step = hooks_.take_step();
        const auto f = state_.group().all_reduce(
            std::vector<double>{hooks_.stop_requested() ? 1.0 : 0.0, hooks_.paused() ? 1.0 : 0.0, step ? 1.0 : 0.0},
            ReduceOp::Max);
        stop_agreed_ = f[0] > 0;
        pause_agreed_ = f[1] > 0;
        if (stop_agreed_ || !pause_agreed_ || f[2] > 0) break; // a step: one micro-batch, then together here again
        hooks_.while_waiting();
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return !stop_agreed_;
}

void RankAgreement::set_own_memory(const MemoryRecord& record) {
    own_memory_ = record;
    own_memory_at_ = std::chrono::steady_clock::now();
}

std::vector<MemoryRecord> RankAgreement::other_ranks_memory() const {
    std::vector<MemoryRecord> out;
    for (const auto& m : rank_memory_)
        if (m) out.push_back(*m);
    return out;
}

std::int64_t RankAgreement::allreduces_since_last_asked() {
    const auto calls = state_.gradients().counters().calls;
    return calls - std::exchange(calls_seen_, calls);
}

SyncCounters RankAgreement::take_window_counters() {
    calls_seen_ = 0;
    return state_.gradients().take_counters();
}

std::vector<torch::Tensor> RankAgreement::gather_rng_states(const torch::Tensor& mine) {
    // Rows of zeros but one, summed: exact for bytes in float32.
    auto all = torch::zeros({world_size(), mine.numel()}, torch::dtype(torch::kFloat).device(state_.group().device()));
    all[rank()].copy_(mine.to(torch::kFloat));
    state_.group().all_reduce(all);
    all = all.cpu();
    std::vector<torch::Tensor> states;
    for (int r = 0; r < world_size(); ++r) states.push_back(all[r].to(torch::kUInt8).clone());
    return states;
}

} // namespace accum::dist

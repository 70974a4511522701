#include "training/thread_tuner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace accum {

namespace {

std::string count_text(int n) { return std::to_string(n) + (n == 1 ? " thread" : " threads"); }

std::string rate_text(double rate) {
    // 12,345 samples/s: the thousands grouped as the benchmarks print them.
    const auto digits = std::to_string(std::llround(std::max(0.0, rate)));
    std::string text;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) text += ',';
        text += digits[i];
    }
    return text;
}

// A trial that kept the count waits twice as long before the next one, up to
// this many times the first gap: a load that comes and goes costs few trials.
constexpr double kMaxGapFactor = 16.0;

} // namespace

std::string ThreadDecision::reason() const {
    std::ostringstream out;
    out << "threads: " << (threads == previous ? "kept " : "now ") << threads << " (was " << previous << ")";
    if (other_cores >= 0) {
        char load[32];
        std::snprintf(load, sizeof load, "%.1f", other_cores);
        out << ", other programs using " << load << " cores";
    }
    out << ";";
    for (std::size_t i = 0; i < rates.size(); ++i)
        out << (i ? "," : "") << " " << count_text(rates[i].first) << " " << rate_text(rates[i].second) << " samples/s";
    return out.str();
}

void ThreadTuner::Window::add(double s, std::int64_t n, double other) {
    seconds += s;
    samples += static_cast<double>(n);
    ++steps;
    if (!std::isnan(other)) {
        load_seconds += other * s;
        known_seconds += s;
    }
}

ThreadTuner::ThreadTuner(std::vector<int> candidates, ThreadTunerOptions options) : options_(options) {
    for (int c : candidates)
        if (c >= 1 && std::find(candidates_.begin(), candidates_.end(), c) == candidates_.end()) candidates_.push_back(c);
    if (candidates_.empty()) candidates_.push_back(1);
    current_ = candidates_.front();
    settle_left_ = options_.settle_steps; // the first steps warm the pools up
    since_trial_s_ = options_.trial_gap_s;
    gap_s_ = options_.trial_gap_s;
}

std::optional<ThreadDecision> ThreadTuner::observe(double seconds, std::int64_t samples, double other_cores) {
    if (candidates_.size() < 2 || seconds <= 0) return std::nullopt;
    since_trial_s_ += seconds;
    if (settle_left_ > 0) {
        --settle_left_;
        return std::nullopt;
    }
    window_.add(seconds, samples, other_cores);
    const bool far_behind = trial_ && window_.rate() < options_.cut_short * trial_->best;
    if (!window_.full(options_) && !far_behind) return std::nullopt;
    const Window w = window_;
    window_ = {};

    if (trial_) {
        trial_->rates.emplace_back(current_, w.rate());
        trial_->best = std::max(trial_->best, w.rate());
        trial_->load_seconds += w.load_seconds;
        trial_->known_seconds += w.known_seconds;
        if (trial_->order.empty()) return end_trial();
        next_in_trial();
        return std::nullopt;
    }
    if (!settled_) {
        settled_ = true;
        settled_rate_ = w.rate();
    }
    const double load = w.load();
    const bool load_changed = load >= 0 && std::abs(load - settled_load_) >= options_.load_change;
    const bool slowed = w.rate() < options_.slowdown * settled_rate_;
    if ((load_changed || slowed) && since_trial_s_ >= gap_s_) {
        start_trial(w.rate());
    } else if (!load_changed && !slowed) {
        settled_rate_ = 0.75 * settled_rate_ + 0.25 * w.rate(); // follows a slow drift, not a sudden drop
    }
    return std::nullopt;
}

void ThreadTuner::start_trial(double reference_rate) {
    // The others first, then the current count again: all timed under the load
    // that started the trial, none from a window the change fell into.
    Trial t;
    t.best = reference_rate;
    t.previous = current_;
    for (int c : candidates_)
        if (c != current_) t.order.push_back(c);
    t.order.push_back(current_);
    trial_ = std::move(t);
    next_in_trial();
}

void ThreadTuner::next_in_trial() {
    current_ = trial_->order.front();
    trial_->order.erase(trial_->order.begin());
    settle_left_ = options_.settle_steps;
}

ThreadDecision ThreadTuner::end_trial() {
    ThreadDecision d;
    d.previous = trial_->previous;
    d.rates = trial_->rates;
    d.other_cores = trial_->known_seconds > 0 ? trial_->load_seconds / trial_->known_seconds : -1.0;
    double previous_rate = 0.0;
    for (const auto& [count, rate] : d.rates)
        if (count == d.previous) previous_rate = rate;
    d.threads = d.previous;
    double best = previous_rate * (1.0 + options_.margin);
    for (const auto& [count, rate] : d.rates)
        if (count != d.previous && rate > best) {
            best = rate;
            d.threads = count;
        }
    for (const auto& [count, rate] : d.rates)
        if (count == d.threads) settled_rate_ = rate;
    settled_ = true;
    if (d.other_cores >= 0) settled_load_ = d.other_cores;
    if (d.threads != current_) {
        current_ = d.threads;
        settle_left_ = options_.settle_steps;
    }
    gap_s_ = d.threads == d.previous ? std::min(gap_s_ * 2, options_.trial_gap_s * kMaxGapFactor) : options_.trial_gap_s;
    since_trial_s_ = 0.0;
    trial_.reset();
    return d;
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later

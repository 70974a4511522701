#include "training/evaluation.h"

#include <cmath>

#include <torch/nn/module.h>
#include <torch/types.h>
#include <torch/utils.h>

#include "data/data_loader.h"
#include "models/model.h"

namespace accum {

ClassificationMetrics metrics_from_confusion(const std::vector<std::int64_t>& confusion, std::int64_t n) {
    ClassificationMetrics m;
    std::int64_t total = 0, correct = 0;
    std::vector<std::int64_t> row(static_cast<std::size_t>(n), 0), col(static_cast<std::size_t>(n), 0);
    for (std::int64_t t = 0; t < n; ++t)
        for (std::int64_t p = 0; p < n; ++p) {
            const auto c = confusion[static_cast<std::size_t>(t * n + p)];
            total += c;
            if (t == p) correct += c;
            row[static_cast<std::size_t>(t)] += c;
            col[static_cast<std::size_t>(p)] += c;
        }
    m.accuracy = total ? static_cast<double>(correct) / static_cast<double>(total) : 0.0;
    auto f1_of = [&](std::int64_t k) {
        const double tp = static_cast<double>(confusion[static_cast<std::size_t>(k * n + k)]);
        const double denom = static_cast<double>(row[static_cast<std::size_t>(k)] + col[static_cast<std::size_t>(k)]);
        return denom > 0 ? 2.0 * tp / denom : 0.0;
    };
    if (n == 2) {
        m.f1 = f1_of(1);
        return m;
    }
    // Macro average over the classes that occur in the labels or the predictions (as scikit-learn).
    double sum = 0;
    int classes = 0;
    for (std::int64_t k = 0; k < n; ++k) {
        if (row[static_cast<std::size_t>(k)] + col[static_cast<std::size_t>(k)] == 0) continue;
        sum += f1_of(k);
        ++classes;
    }
    m.f1 = classes ? sum / classes : 0.0;
    return m;
}

EvalResult evaluate_model(Model& model, DataLoader& loader, const torch::Device& device) {
    torch::NoGradGuard no_grad; // thread-local: we are on the engine thread
    const bool was_training = model.is_training();
    model.eval();
    const std::int64_t n = loader.dataset().num_classes;
    auto confusion = torch::zeros({n * n}, torch::kInt64);
    double loss_sum = 0.0;
    std::int64_t items = 0;
    bool has_predictions = true;
    for (std::int64_t i = 0; i < loader.size(); ++i) {
        const Batch batch = loader.batch(i).to(device);
        const auto out = model.forward(batch);
        loss_sum += out.loss_sum.item<double>();
        items += batch.num_items;
        if (!out.logits.defined()) { // a module that returns only its loss: no predictions to count
            has_predictions = false;
            continue;
        }
        const auto predicted = out.logits.argmax(-1).reshape({-1}).to(torch::kCPU);
        const auto labels = (out.labels.defined() ? out.labels : batch.labels).reshape({-1}).to(torch::kCPU);
        const auto keep = labels.ne(kIgnoreIndex);
        const auto codes = labels.masked_select(keep) * n + predicted.masked_select(keep);
        confusion += torch::bincount(codes, {}, n * n);
    }
    if (was_training) model.train();
    EvalResult r;
    r.loss = items ? loss_sum / static_cast<double>(items) : 0.0;
    const auto* c = confusion.data_ptr<std::int64_t>();
    r.metrics = metrics_from_confusion(std::vector<std::int64_t>(c, c + n * n), n);
    if (!has_predictions) r.metrics.accuracy = r.metrics.f1 = std::nan("");
    return r;
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later

#pragma once
// Evaluation: loss, accuracy and F1 (macro over classes; binary F1 of class 1
// when there are two classes), like compute_metrics in a Trainer script.

#include <cstdint>
#include <vector>

#include <torch/types.h>

namespace accum {

class Model;
class DataLoader;

struct ClassificationMetrics {
    double accuracy = 0.0;
    double f1 = 0.0;
};

// From a confusion matrix [true][predicted] (num_classes × num_classes).
ClassificationMetrics metrics_from_confusion(const std::vector<std::int64_t>& confusion, std::int64_t num_classes);

struct EvalResult {
    double loss = 0.0;
    ClassificationMetrics metrics;
};

// Runs the model over the loader in evaluation mode without gradients.
EvalResult evaluate_model(Model& model, DataLoader& loader, const torch::Device& device);

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later

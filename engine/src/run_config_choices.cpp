// SPDX-License-Identifier: GPL-3.0-or-later
// The names of the options' choices (--mode pytorch, --optimizer adamw, …): one
// table per enum, read both ways by choice_names(), to_string() and parse_choice().
#include "accum/run_config.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace accum {

namespace {

template <typename E>
struct ChoiceTable;

#define ACCUM_CHOICES(E, ...)                                                                                          \
    template <>                                                                                                        \
    struct ChoiceTable<E> {                                                                                            \
        static const std::vector<std::pair<E, std::string>>& entries() {                                              \
            static const std::vector<std::pair<E, std::string>> v{__VA_ARGS__};                                        \
            return v;                                                                                                  \
        }                                                                                                              \
    };

ACCUM_CHOICES(Mode, {Mode::Pytorch, "pytorch"}, {Mode::Accelerator, "accelerator"}, {Mode::Trainer, "trainer"})
ACCUM_CHOICES(DatasetKind, {DatasetKind::FashionMnist, "fashion-mnist"}, {DatasetKind::SyntheticPairs, "synthetic-pairs"},
              {DatasetKind::SyntheticLm, "synthetic-lm"}, {DatasetKind::Csv, "csv"}, {DatasetKind::Tensors, "tensors"})
ACCUM_CHOICES(ModelKind, {ModelKind::Mlp, "mlp"}, {ModelKind::Cnn, "cnn"}, {ModelKind::Transformer, "transformer"},
              {ModelKind::File, "file"})
ACCUM_CHOICES(OptimizerKind, {OptimizerKind::Sgd, "sgd"}, {OptimizerKind::AdamW, "adamw"})
ACCUM_CHOICES(SchedulerKind, {SchedulerKind::Constant, "constant"}, {SchedulerKind::Linear, "linear"},
              {SchedulerKind::Cosine, "cosine"})
ACCUM_CHOICES(Strategy, {Strategy::Epoch, "epoch"}, {Strategy::Steps, "steps"}, {Strategy::No, "no"})
ACCUM_CHOICES(LossNormalization, {LossNormalization::Mean, "mean"}, {LossNormalization::Tokens, "tokens"})
ACCUM_CHOICES(CpuKernels, {CpuKernels::Fused, "fused"}, {CpuKernels::Aten, "aten"})
ACCUM_CHOICES(Backend, {Backend::Auto, "auto"}, {Backend::Gloo, "gloo"}, {Backend::Nccl, "nccl"})
ACCUM_CHOICES(MixedPrecision, {MixedPrecision::No, "no"}, {MixedPrecision::Bf16, "bf16"}, {MixedPrecision::Fp16, "fp16"})
ACCUM_CHOICES(LossScaling, {LossScaling::None, "none"}, {LossScaling::Dynamic, "dynamic"})
#undef ACCUM_CHOICES

} // namespace

template <typename E>
const std::vector<std::string>& choice_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> v;
        for (const auto& [value, name] : ChoiceTable<E>::entries()) v.push_back(name);
        return v;
    }();
    return names;
}

template <typename E>
const std::string& to_string(E value) {
    for (const auto& [v, name] : ChoiceTable<E>::entries())
        if (v == value) return name;
    static const std::string unknown = "?";
    return unknown;
}

template <typename E>
std::optional<E> parse_choice(const std::string& name) {
    for (const auto& [v, n] : ChoiceTable<E>::entries())
        if (n == name) return v;
    return std::nullopt;
}

#define ACCUM_INSTANTIATE_CHOICE(E)                                                                                    \
    template const std::vector<std::string>& choice_names<E>();                                                        \
    template const std::string& to_string<E>(E);                                                                       \
    template std::optional<E> parse_choice<E>(const std::string&);
ACCUM_INSTANTIATE_CHOICE(Mode)
ACCUM_INSTANTIATE_CHOICE(DatasetKind)
ACCUM_INSTANTIATE_CHOICE(ModelKind)
ACCUM_INSTANTIATE_CHOICE(OptimizerKind)
ACCUM_INSTANTIATE_CHOICE(SchedulerKind)
ACCUM_INSTANTIATE_CHOICE(Strategy)
ACCUM_INSTANTIATE_CHOICE(LossNormalization)
ACCUM_INSTANTIATE_CHOICE(CpuKernels)
ACCUM_INSTANTIATE_CHOICE(Backend)
ACCUM_INSTANTIATE_CHOICE(MixedPrecision)
ACCUM_INSTANTIATE_CHOICE(LossScaling)
#undef ACCUM_INSTANTIATE_CHOICE

} // namespace accum

// The CPU kernels (engine/src/kernels/): each fused operator against the same
// maths written with LibTorch operators, and whole runs with --cpu-kernels fused
// against --cpu-kernels aten. Torch first, then Qt Test (this target sets
// QT_NO_KEYWORDS).
#include <torch/autograd.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/modules/conv.h>

#include <QtTest/QtTest>

#include "accum/session.h"
#include "accum/sink.h"
#include "data/batch.h"
#include "kernels/cpu_kernels.h"
#include "kernels/fused_attention.h"
#include "kernels/fused_dense.h"
#include "kernels/fused_loss.h"
#include "kernels/fused_pool.h"
#include "kernels/kernels.h"
#include "training/mixed_precision.h"

#include "capture.h"

using namespace accum;

namespace {

// Two equal sets of a dense stack's parameters W₀, b₀, W₁, b₁, … (nn::Linear's
// layout, requiring gradients) for layer widths `widths`: one for the kernel under
// test, one for the reference.
std::pair<std::vector<torch::Tensor>, std::vector<torch::Tensor>> dense_parameters(const QList<int>& widths) {
    std::vector<torch::Tensor> a, b;
    for (qsizetype l = 0; l + 1 < widths.size(); ++l) {
        const auto w = torch::randn({widths[l + 1], widths[l]}) / std::sqrt(double(widths[l]));
        const auto bias = torch::randn({widths[l + 1]}) * 0.1;
        for (const auto& t : {w, bias}) {
            a.push_back(t.clone().requires_grad_());
            b.push_back(t.clone().requires_grad_());
        }
    }
    return {a, b};
}

} // namespace

class TestKernels : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // A whole run with the engine's kernels against the same run on LibTorch's
    // operators, for each model and style: 50 optimizer steps whose losses agree
    // within 1e-5 (the kernels sum in other orders, so float rounding differs).
    // The MLP runs its fused dense stack and loss, the transformer its fused
    // attention and loss, the CNN its fused loss.
    void fusedRunMatchesAten_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("mode");
        for (const char* model : {"mlp", "cnn", "transformer"})
            for (const char* mode : {"pytorch", "accelerator", "trainer"})
                QTest::newRow((QByteArray(model) + ' ' + mode).constData()) << model << mode; // addRow's "%s" made GCC 12 see a null
    }
    void fusedRunMatchesAten() {
        QFETCH(QString, model);
        QFETCH(QString, mode);
        RunConfig c;
        c.model = *parse_choice<ModelKind>(model.toStdString());
        c.mode = *parse_choice<Mode>(mode.toStdString());
        c.dataset = c.model == ModelKind::Cnn ? DatasetKind::FashionMnist : DatasetKind::SyntheticPairs;
        c.accumulation_steps = 2;
        c.epochs = 0;
#ifdef __SANITIZE_ADDRESS__
        const std::size_t steps = 12; // the kernels themselves run instrumented and slow
#else
        const std::size_t steps = 50;
#endif
        c.max_steps = std::int64_t(steps);
        c.eval_strategy = Strategy::No;
        c.save_strategy = Strategy::No;
        c.optimizer = OptimizerKind::Sgd; // the default experiment's: lr 0.05, momentum 0.9
        c.batch_size = c.model == ModelKind::Cnn ? 8 : 16;
        // One thread: the comparison is of the kernels' maths, not of how a
        // threaded reduction splits its sums. With two threads LibTorch 2.11's
        // convolutions round differently from one run to the other path, and 50
        // updates of batch 8 at lr 0.05 carry 1e-7 at the start to 6.4e-4 at step
        // 50 (measured); with one thread the paths stay within 2.8e-6.
        c.threads = 1;
        testing::Capture fused, aten;
        c.cpu_kernels = CpuKernels::Fused;
        Session().run(c, fused);
        c.cpu_kernels = CpuKernels::Aten;
        Session().run(c, aten);
        QVERIFY2(fused.summary.status == RunStatus::Completed, fused.summary.message.c_str());
        QVERIFY2(aten.summary.status == RunStatus::Completed, aten.summary.message.c_str());
        QCOMPARE(fused.steps.size(), steps);
        QCOMPARE(aten.steps.size(), steps);
        const auto same = testing::compare_losses(fused.steps, aten.steps);
        QVERIFY2(same.within(1e-5), same.what().c_str());
        QVERIFY(fused.steps.back().loss < fused.steps.front().loss); // it learns
    }

    // The fused CPU attention (kernels/fused_attention.cpp) against the same maths
    // written with LibTorch operators, forward and every gradient, with key padding
    // and with a causal mask, at lengths that are and are not multiples of the
    // 8-float vectors, with the AVX2 kernels and the portable ones. The two sum in
    // different orders, so they agree to float rounding (1e-5 on values of order 1).
    void fusedAttentionMatchesOperators_data() {
        QTest::addColumn<int>("batch");
        QTest::addColumn<int>("tokens");
        QTest::addColumn<bool>("causal");
        QTest::addColumn<bool>("portable");
        for (const bool portable : {false, true}) {
            const char* isa = portable ? "portable" : "best";
            QTest::addRow("3x48 padding %s", isa) << 3 << 48 << false << portable;
            QTest::addRow("2x13 causal %s", isa) << 2 << 13 << true << portable;
            QTest::addRow("1x5 padding %s", isa) << 1 << 5 << false << portable;
        }
    }
    void fusedAttentionMatchesOperators() {
        QFETCH(int, batch);
        QFETCH(int, tokens);
        QFETCH(bool, causal);
        QFETCH(bool, portable);
        constexpr std::int64_t width = 64, heads = 4, head_width = width / heads;
        const double scale = 1.0 / std::sqrt(double(head_width));
        torch::manual_seed(7);
        const auto qkv = torch::randn({batch, tokens, 3 * width}).requires_grad_();
        QVERIFY(fused_attention_available(qkv, /*attention_dropout=*/false));
        QVERIFY(!fused_attention_available(qkv, /*attention_dropout=*/true));
        // Sequence b keeps its first tokens - 2·b keys (at least one).
        auto keep = torch::ones({batch, tokens});
        for (int b = 0; b < batch; ++b) keep[b].slice(0, std::max(1, tokens - 2 * b)).fill_(0);
        auto bias = torch::zeros({batch, 1, 1, tokens}).masked_fill(keep.eq(0).view({batch, 1, 1, tokens}), -1e9);
        if (causal) bias = bias + torch::zeros({tokens, tokens}).masked_fill(torch::ones({tokens, tokens}).triu(1).to(torch::kBool), -1e9);
        const auto upstream = torch::randn({batch, tokens, width});

        use_portable_kernels(portable);
        const auto fused = fused_attention(qkv, bias, heads, scale);
        const auto fused_grad = torch::autograd::grad({fused}, {qkv}, {upstream})[0];
        use_portable_kernels(false);

        const auto split = qkv.view({batch, tokens, 3, heads, head_width}).permute({2, 0, 3, 1, 4});
        const auto probs = torch::softmax(torch::matmul(split[0], split[1].transpose(-2, -1)) * scale + bias, -1);
        const auto reference = torch::matmul(probs, split[2]).transpose(1, 2).reshape({batch, tokens, width});
        const auto reference_grad = torch::autograd::grad({reference}, {qkv}, {upstream})[0];

        QCOMPARE(fused.sizes(), reference.sizes());
        const double out_diff = (fused - reference).abs().max().item<double>();
        const double grad_diff = (fused_grad - reference_grad).abs().max().item<double>();
        QVERIFY2(out_diff < 1e-5, qPrintable(QString("largest |Δ output| %1").arg(out_diff)));
        QVERIFY2(grad_diff < 1e-5, qPrintable(QString("largest |Δ gradient| %1").arg(grad_diff)));
        QVERIFY(reference_grad.abs().max().item<double>() > 1e-3); // the gradients are not trivially zero
    }

    // The fused dense stack (kernels/fused_dense.cpp) against nn::Linear and ReLU:
    // the output, every parameter's .grad after two backward passes (the second
    // adds into the first, as under gradient accumulation) and the input's
    // gradient. Shapes cover the MLP's own (784-256-128-10 at micro-batch 64) and
    // ones that leave partial panels of items, register blocks of rows and blocks
    // of columns (37 items, 19 inputs, 13 hidden), with the AVX2 kernels and the
    // portable ones. Both sum in float, in different orders: they agree to 1e-4 on
    // gradients of order 10 (784-term sums).
    void fusedDenseMatchesOperators_data() {
        QTest::addColumn<int>("items");
        QTest::addColumn<QList<int>>("widths");
        QTest::addColumn<bool>("input_grad");
        QTest::addColumn<bool>("portable");
        QTest::addColumn<bool>("in_place");
        for (const bool portable : {false, true})
            for (const bool in_place : {false, true}) {
                const auto name = [&](const char* shape) {
                    return QString("%1 %2%3").arg(shape, portable ? "portable" : "best", in_place ? " in place" : "");
                };
                QTest::newRow(qPrintable(name("mlp 64"))) << 64 << QList<int>{784, 256, 128, 10} << false << portable
                                                         << in_place;
                QTest::newRow(qPrintable(name("ragged 37"))) << 37 << QList<int>{19, 13, 22, 3} << true << portable
                                                            << in_place;
                QTest::newRow(qPrintable(name("one layer 5"))) << 5 << QList<int>{8, 7} << true << portable << in_place;
            }
    }
    void fusedDenseMatchesOperators() {
        QFETCH(int, items);
        QFETCH(QList<int>, widths);
        QFETCH(bool, input_grad);
        QFETCH(bool, portable);
        QFETCH(bool, in_place); // the training styles' path: the operator adds into .grad
        torch::manual_seed(11);
        auto [fused_params, reference_params] = dense_parameters(widths);
        const auto x1 = torch::randn({items, widths.front()}).requires_grad_(input_grad);
        const auto x2 = torch::randn({items, widths.front()}).requires_grad_(input_grad);
        const auto upstream1 = torch::randn({items, widths.back()});
        const auto upstream2 = torch::randn({items, widths.back()});
        QVERIFY(fused_dense_available(x1, fused_params));

        use_portable_kernels(portable);
        const auto fused = fused_dense(x1, fused_params, in_place);
        fused.backward(upstream1); // creates every .grad
        const auto fused_x_grad = input_grad ? x1.grad().clone() : torch::Tensor();
        fused_dense(x2, fused_params, in_place).backward(upstream2); // adds into every .grad
        use_portable_kernels(false);

        auto eager = [&](const torch::Tensor& x) {
            auto h = x;
            for (std::size_t l = 0; l < reference_params.size(); l += 2) {
                h = torch::linear(h, reference_params[l], reference_params[l + 1]);
                if (l + 2 < reference_params.size()) h = torch::relu(h);
            }
            return h;
        };
        if (input_grad) x1.mutable_grad().reset();
        const auto reference = eager(x1);
        reference.backward(upstream1);
        eager(x2).backward(upstream2);

        auto largest = [](const torch::Tensor& a, const torch::Tensor& b) { return (a - b).abs().max().item<double>(); };
        QCOMPARE(fused.sizes(), reference.sizes());
        QVERIFY2(largest(fused, reference) < 1e-5, qPrintable(QString("|Δ output| %1").arg(largest(fused, reference))));
        for (std::size_t i = 0; i < fused_params.size(); ++i) {
            QVERIFY(fused_params[i].grad().defined());
            const double diff = largest(fused_params[i].grad(), reference_params[i].grad());
            QVERIFY2(diff < 1e-4, qPrintable(QString("parameter %1: |Δ .grad| %2").arg(i).arg(diff)));
            QVERIFY(reference_params[i].grad().abs().max().item<double>() > 1e-2); // not trivially zero
        }
        if (input_grad) {
            const double diff = largest(fused_x_grad, x1.grad());
            QVERIFY2(diff < 1e-5, qPrintable(QString("input: |Δ gradient| %1").arg(diff)));
        }
    }

    // The dense stack under bf16 autocast (fused_dense_bf16, which KernelSet picks
    // there) against nn::Linear + ReLU under the same autocast: autocast's own
    // operators in bf16. Three micro-batches: the second reuses the weights' bf16
    // copies, the third comes after an update of every parameter through .data()
    // (an optimizer step), which must replace them. Both paths run the same bf16
    // products (oneDNN; fp32 accumulation, bf16 results) in other layouts, so they
    // agree to bf16 rounding: within 2 % of the largest value (bf16 keeps 8
    // significant bits, 0.4 %; a sum of rounded terms can move a few of them).
    void fusedDenseBf16MatchesAutocast_data() {
        QTest::addColumn<int>("items");
        QTest::addColumn<QList<int>>("widths");
        QTest::addColumn<bool>("input_grad");
        QTest::addColumn<bool>("in_place");
        for (const bool in_place : {false, true}) {
            QTest::newRow(in_place ? "mlp 16 in place" : "mlp 16") << 16 << QList<int>{784, 256, 128, 10} << false
                                                                   << in_place;
            QTest::newRow(in_place ? "ragged 37 in place" : "ragged 37") << 37 << QList<int>{19, 13, 22, 3} << true
                                                                         << in_place;
        }
    }
    void fusedDenseBf16MatchesAutocast() {
        QFETCH(int, items);
        QFETCH(QList<int>, widths);
        QFETCH(bool, input_grad);
        QFETCH(bool, in_place);
        torch::manual_seed(12);
        auto [fused_params, reference_params] = dense_parameters(widths);
        auto eager = [](const std::vector<torch::Tensor>& params) {
            return [&params](const torch::Tensor& x) {
                auto h = x;
                for (std::size_t l = 0; l < params.size(); l += 2) {
                    h = torch::linear(h, params[l], params[l + 1]);
                    if (l + 2 < params.size()) h = torch::relu(h);
                }
                return h;
            };
        };
        const KernelSet fused_kernels(CpuKernels::Fused, in_place), aten_kernels(CpuKernels::Aten, in_place);
        auto relative = [](const torch::Tensor& a, const torch::Tensor& b) {
            return (a.to(torch::kFloat) - b.to(torch::kFloat)).abs().max().item<double>() /
                   b.to(torch::kFloat).abs().max().item<double>();
        };
        for (int micro = 0; micro < 3; ++micro) {
            if (micro == 2) { // an optimizer step, as LibTorch's C++ optimizers write it: through .data()
                torch::NoGradGuard no_grad;
                for (std::size_t i = 0; i < fused_params.size(); ++i) {
                    fused_params[i].data().add_(0.05);
                    reference_params[i].data().add_(0.05);
                }
                dense_weights_changed(); // what the engine's optimizer step calls (LossScaler::step)
            }
            const auto x = torch::randn({items, widths.front()});
            const auto x_fused = x.clone().requires_grad_(input_grad), x_reference = x.clone().requires_grad_(input_grad);
            const auto upstream = torch::randn({items, widths.back()}).to(torch::kBFloat16);
            torch::Tensor fused, reference;
            {
                AutocastScope autocast(c10::DeviceType::CPU, c10::ScalarType::BFloat16);
                fused = fused_kernels.dense_stack(x_fused, fused_params, eager(fused_params));
                reference = aten_kernels.dense_stack(x_reference, reference_params, eager(reference_params));
            }
            QCOMPARE(fused.scalar_type(), torch::kBFloat16); // what autocast's Linear returns
            QCOMPARE(reference.scalar_type(), torch::kBFloat16);
            QVERIFY(fused.grad_fn() && fused.grad_fn()->name().find("FusedDenseBf16") != std::string::npos);
            fused.backward(upstream);
            reference.backward(upstream);
            const double out = relative(fused, reference);
            QVERIFY2(out < 2e-2, qPrintable(QString("micro-batch %1: |Δ output| %2 of the largest").arg(micro).arg(out)));
            for (std::size_t i = 0; i < fused_params.size(); ++i) {
                QCOMPARE(fused_params[i].grad().scalar_type(), torch::kFloat);
                const double diff = relative(fused_params[i].grad(), reference_params[i].grad());
                QVERIFY2(diff < 2e-2, qPrintable(QString("micro-batch %1, parameter %2: |Δ .grad| %3 of the largest")
                                                     .arg(micro).arg(i).arg(diff)));
            }
            if (input_grad) {
                QCOMPARE(x_fused.grad().scalar_type(), torch::kFloat);
                const double diff = relative(x_fused.grad(), x_reference.grad());
                QVERIFY2(diff < 2e-2, qPrintable(QString("micro-batch %1, input: |Δ gradient| %2").arg(micro).arg(diff)));
            }
        }
    }

    // Under bf16 autocast the CNN's ReLU + max-pool runs the fp32 kernel on its
    // activations cast up and casts back (KernelSet::relu_max_pool): ReLU and max
    // are exact in any precision, so output and input gradient equal ATen's bf16
    // operators bit for bit. The values are distinct within every window (a
    // pattern of integers modulo a prime), so no tie decides where a gradient goes.
    void bf16ReluMaxPoolEqualsOperators() {
        const auto pattern = (torch::arange(4 * 8 * 13 * 14) * 138).remainder(251) - 125;
        const auto x = (pattern.to(torch::kFloat) / 8).view({4, 8, 13, 14}).to(torch::kBFloat16);
        const auto upstream = torch::randn({4, 8, 6, 7}).to(torch::kBFloat16);
        const auto a = x.clone().requires_grad_(), b = x.clone().requires_grad_();
        const auto operators = [](const torch::Tensor& h) { return torch::max_pool2d(torch::relu(h), {2, 2}); };
        const auto fused = KernelSet(CpuKernels::Fused).relu_max_pool(a, operators);
        const auto aten = KernelSet(CpuKernels::Aten).relu_max_pool(b, operators);
        QCOMPARE(fused.scalar_type(), torch::kBFloat16);
        QVERIFY(fused.grad_fn() && fused.grad_fn()->name().find("ReluMaxPool") == std::string::npos); // the cast back
        QVERIFY(torch::equal(fused, aten));
        fused.backward(upstream);
        aten.backward(upstream);
        QVERIFY(torch::equal(a.grad(), b.grad()));
        QVERIFY(a.grad().abs().max().item<double>() > 0.1); // not trivially zero
    }

    // Gradients in place change where the fused MLP's parameter gradients go, and
    // only when the call asks for it: without it, autograd::grad for the input alone
    // leaves every .grad untouched (as with nn::Linear); with it the operator fills
    // .grad itself, which is why only a training run's models ask for it.
    void gradientsInPlaceOnlyWhenAsked() {
        torch::manual_seed(5);
        std::vector<torch::Tensor> params{torch::randn({6, 4}).requires_grad_(), torch::randn({6}).requires_grad_(),
                                          torch::randn({3, 6}).requires_grad_(), torch::randn({3}).requires_grad_()};
        const auto x = torch::randn({20, 4}).requires_grad_();
        const auto upstream = torch::randn({20, 3});
        const auto input_grad = torch::autograd::grad({fused_dense(x, params, false)}, {x}, {upstream});
        QCOMPARE(input_grad.size(), std::size_t{1});
        for (const auto& p : params) QVERIFY(!p.grad().defined());
        torch::autograd::grad({fused_dense(x, params, true)}, {x}, {upstream});
        for (const auto& p : params) QVERIFY(p.grad().defined());
    }

    // The noise scale's meter reads a window's first gradient norm from these
    // notes (fused_dense.h): Σ dW² summed as the kernel stores dW must equal the
    // stored gradient's, and a note must lapse when anything else writes .grad.
    void gradientNotesHoldWhatTheBackwardWrote_data() {
        QTest::addColumn<bool>("portable");
        QTest::addRow("best") << false;
        QTest::addRow("portable") << true;
    }
    void gradientNotesHoldWhatTheBackwardWrote() {
        QFETCH(bool, portable);
        use_portable_kernels(portable);
        torch::manual_seed(9);
        // 300 rows: more than the 256 a lane sums before it is added in double;
        // 37 columns: two blocks of 16 and a partial one.
        std::vector<torch::Tensor> params{torch::randn({300, 37}).requires_grad_(), torch::randn({300}).requires_grad_(),
                                          torch::randn({5, 300}).requires_grad_(), torch::randn({5}).requires_grad_()};
        const auto x = torch::randn({23, 37});
        const auto upstream = torch::randn({23, 5});
        const auto squares = [](const torch::Tensor& p) { return p.grad().to(torch::kDouble).square().sum().item<double>(); };
        const auto near = [](double noted, double exact) { return std::abs(noted - exact) <= 1e-6 * exact; };
        arm_gradient_notes(true);
        fused_dense(x, params, true).backward(upstream);
        for (const int w : {0, 2}) QVERIFY2(near(noted_gradient_squares(params[w]), squares(params[w])),
                                            qPrintable(QString("weight %1, first backward").arg(w)));
        QVERIFY(noted_gradient_squares(params[1]) < 0); // biases are not noted
        fused_dense(x * 0.5, params, true).backward(upstream); // adds into .grad in place
        QVERIFY(near(noted_gradient_squares(params[0]), squares(params[0])));
        params[0].mutable_grad().mul_(2.0); // another writer moves the version
        QVERIFY(noted_gradient_squares(params[0]) < 0);
        QVERIFY(noted_gradient_squares(params[2]) >= 0);
        arm_gradient_notes(false);
        QVERIFY(noted_gradient_squares(params[2]) >= 0); // disarming keeps what was noted
        fused_dense(x, params, true).backward(upstream); // disarmed: adds into .grad in place, unversioned
        QVERIFY(noted_gradient_squares(params[2]) < 0);  // so what was noted of it is stale
        arm_gradient_notes(true);                         // a new generation does not
        QVERIFY(noted_gradient_squares(params[2]) < 0);
        arm_gradient_notes(false);
        for (auto& p : params) p.mutable_grad() = torch::Tensor();
        fused_dense(x, params, true).backward(upstream); // disarmed: no notes
        QVERIFY(noted_gradient_squares(params[0]) < 0);
        use_portable_kernels(false);
    }

    void fusedCrossEntropyMatchesOperators_data() {
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("classes");
        QTest::addColumn<int>("ignored"); // every ignored-th row's label is -100 (0: none)
        QTest::addColumn<bool>("portable");
        for (const bool portable : {false, true}) {
            const char* isa = portable ? "portable" : "best";
            QTest::addRow("images 64×10 %s", isa) << 64 << 10 << 0 << portable;
            QTest::addRow("pairs 37×2 %s", isa) << 37 << 2 << 5 << portable;
            QTest::addRow("tokens 300×64 %s", isa) << 300 << 64 << 3 << portable;
            QTest::addRow("ragged 9×17 %s", isa) << 9 << 17 << 4 << portable;
            QTest::addRow("one class 5×1 %s", isa) << 5 << 1 << 0 << portable;
        }
    }
    void fusedCrossEntropyMatchesOperators() {
        QFETCH(int, rows);
        QFETCH(int, classes);
        QFETCH(int, ignored);
        QFETCH(bool, portable);
        torch::manual_seed(17);
        const auto logits = (torch::randn({rows, classes}) * 3).requires_grad_();
        const auto reference_logits = logits.detach().clone().requires_grad_();
        auto labels = torch::randint(classes, {rows}, torch::kLong);
        for (int i = 0; ignored > 0 && i < rows; i += ignored) labels[i] = kIgnoreIndex;
        QVERIFY(fused_cross_entropy_available(logits, labels));

        // Both outputs carry a gradient, as when a loop uses the mean and a hook
        // the sum: the node adds the two.
        const double items = std::max(1, rows - (ignored > 0 ? (rows + ignored - 1) / ignored : 0));
        use_portable_kernels(portable);
        const auto [fused, fused_mean] = fused_cross_entropy(logits, labels, kIgnoreIndex, items);
        (fused * 0.37 + fused_mean * 1.3).backward();
        use_portable_kernels(false);
        namespace F = torch::nn::functional;
        const auto reference = F::cross_entropy(
            reference_logits, labels, F::CrossEntropyFuncOptions().ignore_index(kIgnoreIndex).reduction(torch::kSum));
        const auto reference_mean = reference / items;
        (reference * 0.37 + reference_mean * 1.3).backward();

        QCOMPARE(fused.dim(), 0);
        QCOMPARE(fused_mean.dim(), 0);
        const double loss = fused.item<double>(), expected = reference.item<double>();
        QVERIFY2(std::abs(loss - expected) <= 1e-5 * std::max(1.0, std::abs(expected)),
                 qPrintable(QString("loss %1, LibTorch %2").arg(loss, 0, 'g', 9).arg(expected, 0, 'g', 9)));
        // The mean is the float sum divided as LibTorch's division divides it.
        QCOMPARE(fused_mean.item<float>(), (fused.detach() / items).item<float>());
        const double diff = (logits.grad() - reference_logits.grad()).abs().max().item<double>();
        QVERIFY2(diff < 1e-6, qPrintable(QString("|Δ gradient| %1").arg(diff)));
        if (classes > 1) QVERIFY(reference_logits.grad().abs().max().item<double>() > 1e-2); // not trivially zero
    }

    // As LibTorch's: a label outside the classes is an error that names it, and a NaN
    // logit makes the loss NaN (so --skip-nonfinite sees it).
    void fusedCrossEntropyBadInput() {
        const auto logits = torch::randn({4, 10});
        auto labels = torch::tensor({1, 2, 10, 3}, torch::kLong);
        try {
            fused_cross_entropy_sum(logits, labels, kIgnoreIndex);
            QFAIL("a label of 10 among 10 classes was accepted");
        } catch (const c10::Error& e) {
            QVERIFY2(std::string(e.what()).find("Target 10 is out of bounds") != std::string::npos, e.what());
        }
        labels[2] = 4;
        auto with_nan = logits.clone();
        with_nan[1][3] = std::nan("");
        QVERIFY(std::isnan(fused_cross_entropy_sum(with_nan, labels, kIgnoreIndex).item<double>()));
        QVERIFY(std::isfinite(fused_cross_entropy_sum(logits, labels, kIgnoreIndex).item<double>()));
    }

    // The fused ReLU + 2 × 2 max-pool against LibTorch's relu then max_pool2d: the
    // same output and input gradient bit for bit (max and relu round nothing; the
    // gradient is the upstream value or 0), for the CNN's shapes (28 × 28, 14 × 14),
    // odd ones (the last row and column dropped), rows narrower than the eight-wide
    // loop, with ties (the first maximum wins, as in LibTorch: integer-valued
    // inputs) and negative windows, on the AVX2 and portable kernels. Only the
    // pooled output and a byte per window stay saved for backward.
    void fusedReluMaxPoolMatchesOperators_data() {
        QTest::addColumn<QList<int>>("shape");
        QTest::addColumn<bool>("ties");
        QTest::addColumn<bool>("portable");
        for (const bool portable : {false, true}) {
            const char* set = portable ? "portable" : "best";
            QTest::addRow("cnn block 1 %s", set) << QList<int>{4, 32, 28, 28} << false << portable;
            QTest::addRow("cnn block 2 %s", set) << QList<int>{4, 64, 14, 14} << false << portable;
            QTest::addRow("odd 7x19 %s", set) << QList<int>{3, 5, 7, 19} << false << portable;
            QTest::addRow("ties %s", set) << QList<int>{2, 3, 10, 34} << true << portable;
        }
    }
    void fusedReluMaxPoolMatchesOperators() {
        QFETCH(QList<int>, shape);
        QFETCH(bool, ties);
        QFETCH(bool, portable);
        torch::manual_seed(5);
        const std::vector<std::int64_t> sizes(shape.begin(), shape.end());
        auto input = ties ? torch::randint(-2, 3, sizes).to(torch::kFloat) : torch::randn(sizes);
        const auto upstream = torch::randn({sizes[0], sizes[1], sizes[2] / 2, sizes[3] / 2});
        const auto a = input.clone().requires_grad_();
        const auto b = input.clone().requires_grad_();
        QVERIFY(relu_max_pool_available(a));
        use_portable_kernels(portable);
        const auto fused = relu_max_pool2x2(a);
        fused.backward(upstream);
        use_portable_kernels(false);
        const auto reference = torch::max_pool2d(torch::relu(b), 2);
        reference.backward(upstream);
        QCOMPARE(fused.sizes(), reference.sizes());
        QVERIFY(torch::equal(fused, reference));
        QVERIFY(torch::equal(a.grad(), b.grad()));
        QVERIFY(b.grad().abs().sum().item<double>() > 0); // not trivially zero
    }

    // A NaN wins its window (as in LibTorch's max-pool) and passes no gradient
    // (relu's gradient is 0 where its input is not > 0); the kernels step aside
    // for what they do not serve, and with --cpu-kernels aten.
    void fusedReluMaxPoolNanAndFallback() {
        auto input = torch::randn({1, 2, 4, 4});
        input[0][1][2][3] = std::nan("");
        const auto a = input.clone().requires_grad_();
        const auto fused = relu_max_pool2x2(a);
        QVERIFY(std::isnan(fused[0][1][1][1].item<double>()));
        fused.backward(torch::ones_like(fused));
        QCOMPARE(a.grad()[0][1][2][3].item<double>(), 0.0);
        QVERIFY(!relu_max_pool_available(torch::randn({2, 3, 4}))); // not 4-D
        QVERIFY(!relu_max_pool_available(torch::randn({1, 1, 4, 4}, torch::kDouble)));
        QVERIFY(!relu_max_pool_available(torch::randn({1, 1, 1, 4})));
        int operators = 0;
        const auto via = [&](const torch::Tensor& x) {
            ++operators;
            return torch::max_pool2d(torch::relu(x), 2);
        };
        KernelSet(CpuKernels::Fused).relu_max_pool(torch::randn({1, 1, 4, 4}), via);
        QCOMPARE(operators, 0);
        KernelSet(CpuKernels::Aten).relu_max_pool(torch::randn({1, 1, 4, 4}), via);
        QCOMPARE(operators, 1);
        KernelSet(CpuKernels::Fused).relu_max_pool(torch::randn({1, 1, 4, 4}, torch::kDouble), via);
        QCOMPARE(operators, 2);
    }

    // The few-channel convolution (im2col + GEMM) against the module's own
    // (oneDNN's): output, weight, bias and input gradients within float rounding
    // (1e-5 on values of order 1; they sum in other orders), for the CNN's first
    // convolution; more input channels take the module's path.
    void fewChannelConvolutionMatchesOperators() {
        torch::manual_seed(9);
        torch::nn::Conv2d conv(torch::nn::Conv2dOptions(1, 32, 3).padding(1));
        const auto x = torch::rand({6, 1, 28, 28}).requires_grad_();
        const auto x2 = x.detach().clone().requires_grad_();
        const auto upstream = torch::randn({6, 32, 28, 28});
        int operators = 0;
        const auto module = [&](const torch::Tensor& t) {
            ++operators;
            return conv->forward(t);
        };
        const auto fused = KernelSet(CpuKernels::Fused).conv2d(x, conv->weight, conv->bias, 1, module);
        QCOMPARE(operators, 0);
        fused.backward(upstream);
        const auto w_grad = conv->weight.grad().clone(), b_grad = conv->bias.grad().clone();
        conv->zero_grad();
        const auto reference = KernelSet(CpuKernels::Aten).conv2d(x2, conv->weight, conv->bias, 1, module);
        QCOMPARE(operators, 1);
        reference.backward(upstream);
        auto largest = [](const torch::Tensor& p, const torch::Tensor& q) { return (p - q).abs().max().item<double>(); };
        QVERIFY2(largest(fused, reference) < 1e-5, qPrintable(QString::number(largest(fused, reference))));
        QVERIFY2(largest(w_grad, conv->weight.grad()) < 1e-5 * std::max(1.0, w_grad.abs().max().item<double>()),
                 qPrintable(QString::number(largest(w_grad, conv->weight.grad()))));
        QVERIFY(largest(b_grad, conv->bias.grad()) < 1e-5 * std::max(1.0, b_grad.abs().max().item<double>()));
        QVERIFY(largest(x.grad(), x2.grad()) < 1e-5);
        torch::nn::Conv2d wide(torch::nn::Conv2dOptions(8, 4, 3).padding(1));
        KernelSet(CpuKernels::Fused).conv2d(torch::rand({2, 8, 6, 6}), wide->weight, wide->bias, 1,
                                            [&](const torch::Tensor& t) {
                                                ++operators;
                                                return wide->forward(t);
                                            });
        QCOMPARE(operators, 2);
    }

};

QTEST_GUILESS_MAIN(TestKernels)
#include "test_kernels.moc"
// SPDX-License-Identifier: GPL-3.0-or-later

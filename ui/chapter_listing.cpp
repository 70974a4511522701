#include "chapter_listing.h"

#include <QCoreApplication>

namespace studio {

namespace {

using R = LineRole;

// The sentences, in the translation context "studio::Chapter". %1 is K, %2 the
// number of processes (replaced, not arg()'d: a sentence may use either or none).
const char* const kContext = "studio::Chapter";

class Builder {
public:
    explicit Builder(const ChapterOptions& o) : o_(o) {}

    // A line at `level` (four spaces each) with its roles; `why` null for a
    // continuation of the line above.
    void line(int level, const QString& text, std::vector<LineRole> roles = {}, const char* why = nullptr,
              bool addition = false) {
        ChapterLine l;
        l.text = QString(level * 4, QLatin1Char(' ')) + text;
        l.roles = std::move(roles);
        l.addition = addition;
        if (why) {
            l.why = QCoreApplication::translate(kContext, why);
            l.why.replace(QLatin1String("%1"), QString::number(o_.accumulation_steps));
            l.why.replace(QLatin1String("%2"), QString::number(o_.world_size));
        }
        listing_.lines.push_back(std::move(l));
    }
    void added(int level, const QString& text, std::vector<LineRole> roles = {}, const char* why = nullptr) {
        line(level, text, std::move(roles), why, true);
    }
    ChapterListing take() { return std::move(listing_); }

private:
    const ChapterOptions& o_;
    ChapterListing listing_;
};

QString autocast_dtype(const ChapterOptions& o) {
    return o.mixed_precision == accum::MixedPrecision::Fp16 ? QStringLiteral("torch.float16")
                                                            : QStringLiteral("torch.bfloat16");
}

QString precision_name(const ChapterOptions& o) {
    return o.mixed_precision == accum::MixedPrecision::Fp16 ? QStringLiteral("fp16") : QStringLiteral("bf16");
}

// A float as Python writes it: 1.0, 0.5.
QString norm_text(double n) {
    const QString text = QString::number(n, 'g', 4);
    return text.contains(QLatin1Char('.')) || text.contains(QLatin1Char('e')) ? text : text + QStringLiteral(".0");
}

ChapterListing pytorch_chapter(const ChapterOptions& o) {
    Builder b(o);
    const bool parallel = o.world_size > 1;
    const bool autocast = o.mixed_precision != accum::MixedPrecision::No;
    const bool clip = o.max_grad_norm > 0;
    b.line(0, QStringLiteral("gradient_accumulation_steps = %1").arg(o.accumulation_steps), {},
           QT_TRANSLATE_NOOP("studio::Chapter",
                             "K = %1 micro-batches make one update: the effective batch is the micro-batch × %1."));
    b.line(0, QStringLiteral("for index, batch in enumerate(dataloader):"), {},
           QT_TRANSLATE_NOOP("studio::Chapter",
                             "The loop takes one micro-batch at a time: small enough to fit in memory."));
    int body = 1;
    if (parallel) {
        b.added(1, QStringLiteral("sync = ((index + 1) % gradient_accumulation_steps"), {},
                QT_TRANSLATE_NOOP("studio::Chapter",
                                  "With %2 processes: only the micro-batch that ends the window needs the gradients "
                                  "averaged across them."));
        b.added(3, QStringLiteral("== 0 or index + 1 == len(dataloader))"));
        b.added(1, QStringLiteral("with nullcontext() if sync else model.no_sync():"), {R::NoSync},
                QT_TRANSLATE_NOOP("studio::Chapter",
                                  "no_sync(): the other micro-batches keep their gradients local, so the processes "
                                  "communicate once per update, not %1 times."));
        body = 2;
    }
    int forward = body;
    if (autocast) {
        b.added(body, QStringLiteral("with torch.autocast(\"%1\",").arg(o.cuda ? QStringLiteral("cuda") : QStringLiteral("cpu")),
                {R::Autocast},
                QT_TRANSLATE_NOOP("studio::Chapter",
                                  "autocast: the forward's matrix products run in lower precision; the weights and "
                                  ".grad stay float32."));
        b.added(body + 5, QStringLiteral("dtype=%1):").arg(autocast_dtype(o)), {R::Autocast});
        forward = body + 1;
    }
    b.line(forward, QStringLiteral("outputs = model(**batch)"), {R::Forward},
           QT_TRANSLATE_NOOP("studio::Chapter", "Forward: the model computes this micro-batch's outputs and loss."));
    b.line(forward, QStringLiteral("loss = outputs.loss"), {R::Forward},
           QT_TRANSLATE_NOOP("studio::Chapter", "The loss is the mean over this micro-batch's samples only."));
    b.line(body, QStringLiteral("loss = loss / gradient_accumulation_steps"), {R::LossScale},
           QT_TRANSLATE_NOOP("studio::Chapter",
                             "Divided by K: the %1 micro-batch means add up to the mean over the whole effective "
                             "batch."));
    if (o.loss_scaler)
        b.added(body, QStringLiteral("scaler.scale(loss).backward()"), {R::Backward, R::AllReduce},
                QT_TRANSLATE_NOOP("studio::Chapter",
                                  "With a loss scaler, backward runs on loss × S, so that small gradients survive; "
                                  "the gradients add up in .grad."));
    else
        b.line(body, QStringLiteral("loss.backward()"), {R::Backward, R::AllReduce},
               QT_TRANSLATE_NOOP("studio::Chapter",
                                 "backward() adds this micro-batch's gradient into .grad: it accumulates, it is not "
                                 "replaced."));
    if (parallel) {
        b.added(1, QStringLiteral("if sync:"), {},
                QT_TRANSLATE_NOOP("studio::Chapter",
                                  "Every K-th micro-batch, or the last one of the data (a shorter window), ends the "
                                  "window: now the update."));
    } else {
        b.line(1, QStringLiteral("if ((index + 1) % gradient_accumulation_steps"), {},
               QT_TRANSLATE_NOOP("studio::Chapter",
                                 "Every K-th micro-batch, or the last one of the data (a shorter window), ends the "
                                 "window: now the update."));
        b.line(3, QStringLiteral("== 0) or (index + 1 == len(dataloader)):"));
    }
    if (o.loss_scaler)
        b.added(2, QStringLiteral("scaler.unscale_(optimizer)"), {R::Unscale},
                QT_TRANSLATE_NOOP("studio::Chapter",
                                  "unscale_(): .grad is divided by S once per window, and checked for inf or NaN."));
    if (clip)
        b.added(2, QStringLiteral("clip_grad_norm_(model.parameters(), %1)").arg(norm_text(o.max_grad_norm)),
                {R::OptimizerStep},
                QT_TRANSLATE_NOOP("studio::Chapter",
                                  "Clipping looks at the whole window's gradient, once per update, just before the "
                                  "step."));
    if (o.loss_scaler)
        b.added(2, QStringLiteral("scaler.step(optimizer)"), {R::OptimizerStep},
                QT_TRANSLATE_NOOP("studio::Chapter",
                                  "scaler.step(): one update with the window's gradient, skipped if a gradient was "
                                  "inf or NaN."));
    else
        b.line(2, QStringLiteral("optimizer.step()"), {R::OptimizerStep},
               QT_TRANSLATE_NOOP("studio::Chapter",
                                 "optimizer.step(): one update with the gradient of the whole effective batch."));
    if (o.loss_scaler)
        b.added(2, QStringLiteral("scaler.update()"), {R::ScalerUpdate},
                QT_TRANSLATE_NOOP("studio::Chapter",
                                  "scaler.update(): once per window, S halves after an overflow and grows after a run "
                                  "of good windows."));
    b.line(2, QStringLiteral("lr_scheduler.step()"), {R::SchedulerStep},
           QT_TRANSLATE_NOOP("studio::Chapter",
                             "The schedule steps once per update, not per micro-batch: it counts updates."));
    b.line(2, QStringLiteral("optimizer.zero_grad()"), {R::ZeroGrad},
           QT_TRANSLATE_NOOP("studio::Chapter",
                             "zero_grad() empties .grad for the next window; without it, windows would add up."));
    return b.take();
}

ChapterListing accelerator_chapter(const ChapterOptions& o) {
    Builder b(o);
    const bool autocast = o.mixed_precision != accum::MixedPrecision::No;
    const bool clip = o.max_grad_norm > 0;
    const char* accelerator_why = QT_TRANSLATE_NOOP(
        "studio::Chapter", "Accelerator(gradient_accumulation_steps=%1): Accelerate counts the micro-batches for you.");
    b.line(0, QStringLiteral("accelerator = Accelerator("), {}, accelerator_why);
    if (autocast) {
        b.line(1, QStringLiteral("gradient_accumulation_steps=%1,").arg(o.accumulation_steps));
        b.added(1, QStringLiteral("mixed_precision=\"%1\")").arg(precision_name(o)), {},
                QT_TRANSLATE_NOOP("studio::Chapter",
                                  "mixed_precision: the prepared model's forward runs under autocast."));
    } else {
        b.line(1, QStringLiteral("gradient_accumulation_steps=%1)").arg(o.accumulation_steps));
    }
    b.line(0, QStringLiteral("model, optimizer, dataloader, lr_scheduler = ("), {},
           QT_TRANSLATE_NOOP("studio::Chapter",
                             "prepare() wraps the model, optimizer, data and schedule (with several processes: DDP "
                             "and a sharded data loader)."));
    b.line(1, QStringLiteral("accelerator.prepare(model, optimizer,"));
    b.line(6, QStringLiteral("dataloader, lr_scheduler))"));
    b.line(0, QStringLiteral("for batch in dataloader:"), {},
           QT_TRANSLATE_NOOP("studio::Chapter",
                             "The loop takes one micro-batch at a time: small enough to fit in memory."));
    b.line(1, QStringLiteral("with accelerator.accumulate(model):"), {R::NoSync},
           o.world_size > 1
               ? QT_TRANSLATE_NOOP("studio::Chapter",
                                   "accumulate() knows whether this micro-batch ends the window; until it does, it "
                                   "enters no_sync() and the %2 processes do not communicate.")
               : QT_TRANSLATE_NOOP("studio::Chapter",
                                   "accumulate() knows whether this micro-batch ends the window, and tells the "
                                   "optimizer and the scheduler."));
    b.line(2, QStringLiteral("outputs = model(**batch)"), {R::Autocast, R::Forward},
           QT_TRANSLATE_NOOP("studio::Chapter", "Forward: the model computes this micro-batch's outputs and loss."));
    b.line(2, QStringLiteral("loss = outputs.loss"), {R::Forward},
           QT_TRANSLATE_NOOP("studio::Chapter", "The loss is the mean over this micro-batch's samples only."));
    b.line(2, QStringLiteral("accelerator.backward(loss)"), {R::LossScale, R::Backward, R::AllReduce},
           QT_TRANSLATE_NOOP("studio::Chapter",
                             "accelerator.backward() divides the loss by K and runs backward: the gradients add up "
                             "in .grad."));
    std::vector<LineRole> step_roles{R::OptimizerStep};
    if (clip) {
        b.added(2, QStringLiteral("if accelerator.sync_gradients:"), {},
                QT_TRANSLATE_NOOP("studio::Chapter",
                                  "Clipping only when the window ends, on the whole window's gradient."));
        b.added(3, QStringLiteral("accelerator.clip_grad_norm_("), {R::Unscale, R::OptimizerStep});
        b.added(4, QStringLiteral("model.parameters(), %1)").arg(norm_text(o.max_grad_norm)),
                {R::Unscale, R::OptimizerStep});
    } else {
        step_roles.push_back(R::Unscale); // the prepared optimizer unscales before it steps
    }
    step_roles.push_back(R::ScalerUpdate);
    b.line(2, QStringLiteral("optimizer.step()"), step_roles,
           QT_TRANSLATE_NOOP("studio::Chapter",
                             "optimizer.step() is called for every micro-batch, but the prepared optimizer steps only "
                             "when the window ends."));
    b.line(2, QStringLiteral("lr_scheduler.step()"), {R::SchedulerStep},
           QT_TRANSLATE_NOOP("studio::Chapter", "The prepared scheduler steps with the optimizer: once per update."));
    b.line(2, QStringLiteral("optimizer.zero_grad()"), {R::ZeroGrad},
           QT_TRANSLATE_NOOP("studio::Chapter",
                             "zero_grad() also waits for the window's end, so .grad accumulates until then."));
    return b.take();
}

ChapterListing trainer_chapter(const ChapterOptions& o) {
    Builder t(o);
    const bool autocast = o.mixed_precision != accum::MixedPrecision::No;
    const bool clip = o.max_grad_norm > 0;
    // The last argument closes the call: no line of its own for ")".
    const bool more = autocast || clip;
    t.line(0, QStringLiteral("args = TrainingArguments(output_dir=\"run\","), {},
           QT_TRANSLATE_NOOP("studio::Chapter", "With the Trainer the loop is configured, not written."));
    t.line(1, QStringLiteral("per_device_train_batch_size=%1,").arg(o.batch_size));
    t.line(1, QStringLiteral("gradient_accumulation_steps=%1%2").arg(o.accumulation_steps).arg(more ? QLatin1Char(',') : QLatin1Char(')')), {},
           QT_TRANSLATE_NOOP("studio::Chapter",
                             "gradient_accumulation_steps=%1: the Trainer runs %1 micro-batches per update."));
    if (autocast)
        t.added(1, QStringLiteral("%1=True%2").arg(precision_name(o)).arg(clip ? QLatin1Char(',') : QLatin1Char(')')), {},
                QT_TRANSLATE_NOOP("studio::Chapter", "Mixed precision: the forward runs under autocast."));
    if (clip)
        t.added(1, QStringLiteral("max_grad_norm=%1)").arg(norm_text(o.max_grad_norm)), {},
                QT_TRANSLATE_NOOP("studio::Chapter",
                                  "Clipping, once per update, on the whole window's gradient."));
    t.line(0, QStringLiteral("trainer = Trainer(model, args, train_dataset=data)"), {},
           QT_TRANSLATE_NOOP("studio::Chapter", "The Trainer gets the model, the arguments and the data."));
    // train() runs every line folded under it: it is lit whatever runs.
    t.line(0, QStringLiteral("trainer.train()"),
           {R::NoSync, R::Autocast, R::Forward, R::LossScale, R::Backward, R::AllReduce, R::Unscale, R::OptimizerStep,
            R::ScalerUpdate, R::SchedulerStep, R::ZeroGrad},
           QT_TRANSLATE_NOOP("studio::Chapter",
                             "train() runs the whole loop; folded underneath, what it does for each update."));
    t.line(1, QStringLiteral("# for window in windows:   (K micro-batches)"), {},
           QT_TRANSLATE_NOOP("studio::Chapter",
                             "Inside train(): each update takes a window of %1 micro-batches from the data loader."));
    t.line(1, QStringLiteral("#   for inputs in window:"));
    if (o.world_size > 1) {
        t.added(1, QStringLiteral("#     with no_sync(model):  # not the last"), {R::NoSync},
                QT_TRANSLATE_NOOP("studio::Chapter",
                                  "no_sync() on every micro-batch but the window's last: the %2 processes communicate "
                                  "once per update."));
    }
    if (autocast)
        t.added(1, QStringLiteral("#     with autocast(dtype=%1):").arg(autocast_dtype(o)), {R::Autocast},
                QT_TRANSLATE_NOOP("studio::Chapter",
                                  "autocast: the forward's matrix products run in lower precision; the weights and "
                                  ".grad stay float32."));
    t.line(1, QStringLiteral("#     outputs = model(**inputs)"), {R::Forward},
           QT_TRANSLATE_NOOP("studio::Chapter", "Forward: the model computes this micro-batch's outputs and loss."));
    t.line(1, QStringLiteral("#     loss = outputs.loss / len(window)"), {R::LossScale},
           QT_TRANSLATE_NOOP("studio::Chapter",
                             "The Trainer divides by the window's real size: K, or fewer in a last, shorter window."));
    t.line(1, QStringLiteral("#     accelerator.backward(loss)"), {R::Backward, R::AllReduce},
           QT_TRANSLATE_NOOP("studio::Chapter",
                             "backward() adds this micro-batch's gradient into .grad: it accumulates, it is not "
                             "replaced."));
    if (clip)
        t.added(1, QStringLiteral("#   clip_grad_norm_(model.parameters(), %1)").arg(norm_text(o.max_grad_norm)),
                {R::Unscale, R::OptimizerStep});
    t.line(1, QStringLiteral("#   optimizer.step()"),
           clip ? std::vector<LineRole>{R::OptimizerStep, R::ScalerUpdate}
                : std::vector<LineRole>{R::Unscale, R::OptimizerStep, R::ScalerUpdate},
           QT_TRANSLATE_NOOP("studio::Chapter",
                             "After the window's last micro-batch: one optimizer step, one scheduler step, .grad "
                             "zeroed."));
    t.line(1, QStringLiteral("#   lr_scheduler.step()"), {R::SchedulerStep});
    t.line(1, QStringLiteral("#   model.zero_grad()"), {R::ZeroGrad});
    return t.take();
}

} // namespace

ChapterOptions chapter_options(const accum::RunConfig& config) {
    ChapterOptions o;
    o.style = QString::fromStdString(accum::to_string(config.mode));
    o.accumulation_steps = static_cast<int>(std::max<std::int64_t>(1, config.accumulation_steps));
    o.batch_size = config.batch_size;
    o.world_size = static_cast<int>(std::max<std::int64_t>(1, config.world_size()));
    o.mixed_precision = config.mixed_precision;
    o.loss_scaler = config.uses_loss_scaler();
    o.max_grad_norm = config.max_grad_norm;
    o.cuda = config.device.rfind("cuda", 0) == 0;
    return o;
}

CodeListing ChapterListing::listing() const {
    CodeListing listing;
    for (const auto& line : lines) {
        for (const auto role : line.roles) listing.lines_of[role].append(int(listing.lines.size()));
        listing.lines << line.text;
    }
    return listing;
}

std::vector<int> ChapterListing::step_starts() const {
    std::vector<int> starts;
    for (std::size_t i = 0; i < lines.size(); ++i)
        if (!lines[i].why.isEmpty()) starts.push_back(static_cast<int>(i));
    return starts;
}

int ChapterListing::end_of_step(int step) const {
    const auto starts = step_starts();
    if (step < 0 || starts.empty()) return 0;
    if (step + 1 >= int(starts.size())) return static_cast<int>(lines.size());
    return starts[static_cast<std::size_t>(step) + 1];
}

ChapterListing chapter_listing(const ChapterOptions& options) {
    if (options.style == QLatin1String("accelerator")) return accelerator_chapter(options);
    if (options.style == QLatin1String("trainer")) return trainer_chapter(options);
    return pytorch_chapter(options);
}

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later

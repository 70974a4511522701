#include "styles/accelerator.h"

#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/optimizer.h>

#include "data/data_loader.h"
#include "models/model.h"
#include "training/lr_scheduler.h"
#include "training/run_context.h"

namespace accum {

// ------------------------------------------------------------ the pieces

void AcceleratedOptimizer::step() {
    if (state_.sync_gradients) optimizer_.step();
}

void AcceleratedOptimizer::zero_grad() {
    if (state_.sync_gradients) accum::zero_grad(optimizer_);
}

void AcceleratedScheduler::step() {
    if (!state_.sync_gradients) return; // the optimizer did not step, neither does the schedule
    scheduler_.step();
}

PreparedDataLoader::Iterator::Iterator(PreparedDataLoader* owner, std::int64_t index) : owner_(owner), index_(index) {
    if (owner_ && index_ < owner_->size()) {
        owner_->state_.end_of_dataloader = false;
        current_ = owner_->loader_.batch(index_).to(owner_->device_);
        fetch();
    }
}

void PreparedDataLoader::Iterator::fetch() {
    // Read one batch ahead: if there is none, the current one is the last.
    if (index_ + 1 < owner_->size()) {
        next_ = owner_->loader_.batch(index_ + 1).to(owner_->device_);
        owner_->state_.end_of_dataloader = false;
    } else {
        next_.reset();
        owner_->state_.end_of_dataloader = true;
    }
}

PreparedDataLoader::Iterator& PreparedDataLoader::Iterator::operator++() {
    ++index_;
    if (next_) {
        current_ = std::move(*next_);
        fetch();
    } else {
        index_ = owner_->size();
    }
    return *this;
}

PreparedDataLoader::Iterator PreparedDataLoader::begin() {
    const std::int64_t start = std::min(skip_, size());
    skip_ = 0;
    return Iterator(this, start);
}

PreparedDataLoader::Iterator PreparedDataLoader::end() { return Iterator(nullptr, size()); }

std::int64_t PreparedDataLoader::size() const { return loader_.size(); }

Accelerator::Accelerator(std::int64_t gradient_accumulation_steps, torch::Device device) : device_(device) {
    gradient_state.num_steps = gradient_accumulation_steps;
}

Accelerator::Prepared Accelerator::prepare(Model& model, torch::optim::Optimizer& optimizer, DataLoader& loader,
                                           LrScheduler& scheduler) {
    model.to(device_);
    return Prepared{model, AcceleratedOptimizer(optimizer, gradient_state),
                    PreparedDataLoader(loader, gradient_state, device_), AcceleratedScheduler(scheduler, gradient_state)};
}

void Accelerator::do_sync() {
    if (gradient_state.end_of_dataloader) {
        gradient_state.step = 0;
        gradient_state.sync_gradients = true;
    } else {
        gradient_state.step += 1;
        gradient_state.sync_gradients = gradient_state.step % gradient_state.num_steps == 0;
    }
}

Accelerator::AccumulateScope::AccumulateScope(Accelerator& accelerator) { accelerator.do_sync(); }


void Accelerator::backward(const torch::Tensor& loss) {
    if (gradient_state.num_steps > 1)
        (loss / static_cast<double>(gradient_state.num_steps)).backward();
    else
        loss.backward();
}

double Accelerator::clip_grad_norm_(const std::vector<torch::Tensor>& parameters, double max_norm) {
    return torch::nn::utils::clip_grad_norm_(parameters, max_norm);
}

// ------------------------------------------------------------ the loop
//
// Read beside the Python it mirrors:
//
//   accelerator = Accelerator(gradient_accumulation_steps=K)
//   model, optimizer, train_dataloader, lr_scheduler = accelerator.prepare(
//       model, optimizer, train_dataloader, lr_scheduler)
//   for epoch in range(num_epochs):
//       model.train()
//       for batch in train_dataloader:
//           with accelerator.accumulate(model):
//               outputs = model(batch["input_ids"], labels=batch["labels"])
//               loss = outputs.loss
//               accelerator.backward(loss)
//               if accelerator.sync_gradients:
//                   accelerator.clip_grad_norm_(model.parameters(), max_grad_norm)
//               optimizer.step()
//               lr_scheduler.step()
//               optimizer.zero_grad()
void run_accelerator_style(RunContext& ctx) {
    Accelerator accelerator(ctx.config.accumulation_steps, ctx.device);
    auto [model, optimizer, train_dataloader, lr_scheduler] =
        accelerator.prepare(*ctx.model, *ctx.optimizer, *ctx.train_loader, *ctx.lr_scheduler);
    const std::int64_t K = accelerator.gradient_accumulation_steps();
    const bool token_normalised = ctx.uses_token_normalization();
    double num_items_in_batch = 1; // label tokens of the current window (token normalisation)

    for (std::int64_t epoch = ctx.progress.epoch; epoch < ctx.num_epochs(); ++epoch) {
        ctx.begin_epoch(epoch);                                   // model.train()
        train_dataloader.skip_first_batches(ctx.progress.next_index);
        const std::int64_t L = train_dataloader.size();
        for (auto it = train_dataloader.begin(); it != train_dataloader.end(); ++it) {  // for batch in train_dataloader:
            if (!ctx.proceed()) return;
            const Batch& batch = *it;
            const std::int64_t index = it.index();
            const std::int64_t window_start = index - index % K, window_end = std::min(window_start + K, L);
            if (token_normalised && index == window_start)
                num_items_in_batch = static_cast<double>(ctx.train_loader->items_in(window_start, window_end));
            auto scope = accelerator.accumulate(model);           // with accelerator.accumulate(model):
            auto outputs = model.forward(batch);                  //     outputs = model(inputs, labels=targets)
            // Token-level loss: sum / num_items_in_batch of the window, times K
            // because accelerator.backward divides by K again.
            auto loss = token_normalised ? outputs.loss_sum * (static_cast<double>(K) / num_items_in_batch)
                                         : outputs.loss;          //     loss = outputs.loss
            accelerator.backward(loss);                           //     accelerator.backward(loss)
            ctx.after_backward(outputs, batch, static_cast<int>(index - window_start + 1),
                               static_cast<int>(window_end - window_start), accelerator.sync_gradients());
            WindowUpdate update;
            if (accelerator.sync_gradients())                     //     if accelerator.sync_gradients:
                update = ctx.before_optimizer_step();             //         clip_grad_norm_(...) once per window
            if (!update.skip) {                                   //     (--skip-nonfinite: step_was_skipped)
                optimizer.step();                                 //     optimizer.step()      (no-op until sync)
                lr_scheduler.step();                              //     lr_scheduler.step()   (no-op until sync)
            }
            optimizer.zero_grad();                                //     optimizer.zero_grad() (no-op until sync)
            if (accelerator.sync_gradients()) {
                ctx.after_optimizer_step(update, index + 1);
                if (ctx.max_steps_reached_mid_epoch(index + 1)) return;
            }
        }
        ctx.end_epoch();
    }
}

} // namespace accum

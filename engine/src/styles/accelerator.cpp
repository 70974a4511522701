#include "styles/accelerator.h"
#include "styles/styles.h"


#include "data/data_loader.h"
#include "models/model.h"
#include "training/lr_scheduler.h"
#include "training/mixed_precision.h"
#include "training/run_context.h"

namespace accum {

// ------------------------------------------------------------ the pieces

ModelOutput PreparedModel::operator()(const Batch& batch) {
    AutocastScope autocast(device_.type(), mixed_precision_);
    return ddp_(batch);
}

void AcceleratedOptimizer::step() {
    if (!state_.sync_gradients) return;
    const bool may_step = !state_.may_step || state_.may_step(state_.last_grad_norm);
    // As Accelerate: scaler.step(optimizer), scaler.update(); an inf/NaN
    // gradient made the scaler skip the step (a scaler that is off just steps).
    const bool stepped = may_step && scaler_.step(optimizer_);
    scaler_.update();
    step_was_skipped_ = !stepped;
}

void AcceleratedOptimizer::zero_grad() {
    if (state_.sync_gradients) optimizer_.zero_grad();
}

void AcceleratedScheduler::step() {
    if (!state_.sync_gradients) return;         // the optimizer did not step, neither does the schedule
    if (optimizer_.step_was_skipped()) return;  // nor after a skipped step
    scheduler_.step();
}

void PreparedDataLoader::set_epoch(std::int64_t epoch) { loader_.set_epoch(epoch); }

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

std::int64_t PreparedDataLoader::items_in(std::int64_t first, std::int64_t last) const {
    return loader_.items_in(first, last);
}

Accelerator::Accelerator(std::int64_t gradient_accumulation_steps, torch::Device device,
                         MixedPrecision mixed_precision, LossScaler* scaler)
    : device_(device), mixed_precision_(mixed_precision),
      own_scaler_(scaler ? nullptr : std::make_unique<LossScaler>(GradScalerOptions{.enabled = false})),
      scaler_(scaler ? *scaler : *own_scaler_) {
    gradient_state.num_steps = gradient_accumulation_steps;
}

Accelerator::~Accelerator() = default;

Accelerator::Prepared Accelerator::prepare(Model& model, Optimizer& optimizer, DataLoader& loader,
                                           LrScheduler& scheduler) {
    model.to(device_);
    optimizers_.push_back(&optimizer);
    return Prepared(model, optimizer, loader, scheduler, gradient_state, device_, mixed_precision_, scaler_);
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

dist::NoSync Accelerator::AccumulateScope::enter(Accelerator& accelerator, dist::DistributedDataParallel* model) {
    accelerator.do_sync();
    const bool allow_gradient_sync = accelerator.sync_gradients() || accelerator.gradient_state.sync_each_batch;
    return allow_gradient_sync || !model ? dist::nullcontext() : model->no_sync();
}

int Accelerator::num_processes() const {
    const auto* state = dist::default_state();
    return state ? state->world_size() : 1;
}


void Accelerator::backward(const torch::Tensor& loss) {
    const auto divided = gradient_state.num_steps > 1 ? loss / static_cast<double>(gradient_state.num_steps) : loss;
    scaler_.scale(divided).backward();
}

void Accelerator::unscale_gradients() {
    for (auto* optimizer : optimizers_) scaler_.unscale_(*optimizer);
}

double Accelerator::clip_grad_norm_(const std::vector<torch::Tensor>& parameters, double max_norm) {
    unscale_gradients();
    gradient_state.last_grad_norm = accum::clip_grad_norm_(parameters, max_norm);
    return gradient_state.last_grad_norm;
}

// ------------------------------------------------------------ the loop
//
// The region between the listing marks is what the studio's code panel shows.
// Read it beside the Python it mirrors:
//
//   accelerator = Accelerator(mixed_precision="bf16", gradient_accumulation_steps=K)
//   model, optimizer, train_dataloader, lr_scheduler = accelerator.prepare(
//       model, optimizer, train_dataloader, lr_scheduler)   # model in DDP when distributed
//   for epoch in range(num_epochs):
//       model.train()
//       for batch in train_dataloader:
//           with accelerator.accumulate(model):       # model.no_sync() unless syncing
//               outputs = model(batch["input_ids"], labels=batch["labels"])   # under autocast
//               loss = outputs.loss
//               accelerator.backward(loss)      # scaler.scale(loss / K).backward() with a scaler
//               if accelerator.sync_gradients:
//                   accelerator.clip_grad_norm_(model.parameters(), max_grad_norm)   # unscale_ first
//               optimizer.step()                # scaler.step(optimizer); scaler.update()
//               lr_scheduler.step()             # not after a skipped step
//               optimizer.zero_grad()
void run_accelerator_style(RunContext& ctx) {
    const std::int64_t K = ctx.config().accumulation_steps;
    const auto num_epochs = ctx.num_epochs();
    const double max_grad_norm = ctx.config().max_grad_norm;
    const bool token_loss = ctx.uses_token_normalization();
    double num_items_in_batch = 1; // label tokens of the current window (token loss)
    const auto precision = ctx.config().mixed_precision; // no, bf16 or fp16
    auto& scaler = ctx.scaler();                         // passes every call through without loss scaling

    // listing:begin
    Accelerator accelerator(/*gradient_accumulation_steps=*/K, ctx.device(),
                            /*mixed_precision=*/precision, /*scaler=*/&scaler);
    auto [model, optimizer, train_dataloader, lr_scheduler] =   // model: DistributedDataParallel(model)
        accelerator.prepare(ctx.model(), ctx.optimizer(), ctx.train_loader(), ctx.lr_scheduler());
    accelerator.gradient_state.may_step = [&ctx](double norm) { return ctx.end_window(norm); };  // else skipped
    accelerator.gradient_state.sync_each_batch = ctx.config().sync_each_micro_batch;  // the pitfall
    for (auto epoch = ctx.progress().epoch; epoch < num_epochs; ++epoch) {
        model.train();
        train_dataloader.set_epoch(epoch);                       // this epoch's shuffle
        train_dataloader.skip_first_batches(ctx.progress().next_index);  // resuming mid-epoch
        const auto L = train_dataloader.size();
        for (auto it = train_dataloader.begin(); it != train_dataloader.end(); ++it) {
            if (!ctx.proceed()) return;                          // Pause and Stop
            const Batch& batch = *it;
            const auto index = it.index();
            if (token_loss && index % K == 0)                    // label tokens of the whole window
                num_items_in_batch = train_dataloader.items_in(index, std::min(index + K, L));
            auto scope = accelerator.accumulate(model);  // with accelerator.accumulate(model): no_sync  //@no_sync
            auto outputs = model(batch);                         // under autocast           //@autocast,forward
            auto loss = token_loss ? outputs.loss_sum * accelerator.num_processes() / num_items_in_batch * K
                                   : outputs.loss;                // backward divides by K
            accelerator.backward(loss);   // scaler.scale(loss / K).backward(), averaged on sync  //@scale,backward,all_reduce
            ctx.micro_batch_done(outputs, batch, index, accelerator.sync_gradients());
            if (accelerator.sync_gradients())
                accelerator.clip_grad_norm_(model.parameters(), max_grad_norm);  // unscale_ first  //@unscale
            optimizer.step();                                    // no-op until sync; scaler.step, update //@step,update
            lr_scheduler.step();                                 // no-op until sync, or after a skip //@scheduler
            optimizer.zero_grad();                               // no-op until sync          //@zero_grad
            if (accelerator.sync_gradients()) ctx.optimizer_step_done(index + 1);  // log, evaluate, save
            if (ctx.max_steps_reached_mid_epoch()) return;
        }
        ctx.epoch_done();
    }
    // listing:end
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later

#include "config_panel.h"

#include <QCheckBox>
#include <QAbstractButton>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QResizeEvent>
#include <QShowEvent>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <climits>
#include <cmath>

#include "accum/session.h"
#include "memory_estimator.h"
#include "runs_folder.h"

namespace studio {

namespace {

QComboBox* make_combo(const QString& name, const std::vector<std::string>& values) {
    auto* combo = new QComboBox;
    combo->setObjectName(name);
    for (const auto& v : values) {
        const auto key = QString::fromStdString(v);
        combo->addItem(key, key);
    }
    return combo;
}

// The words shown for the value `key` (the option's own name stays its data).
void set_item_text(QComboBox* combo, const char* key, const QString& text) {
    const int index = combo->findData(QString::fromLatin1(key));
    if (index >= 0) combo->setItemText(index, text);
}

QSpinBox* make_spin(const QString& name, int minimum, int maximum) {
    auto* spin = new QSpinBox;
    spin->setObjectName(name);
    spin->setRange(minimum, maximum);
    spin->setAccelerated(true);
    return spin;
}

void select_data(QComboBox* combo, const std::string& value) {
    const auto key = QString::fromStdString(value);
    int index = combo->findData(key);
    if (index < 0) {
        combo->addItem(key, key);
        index = combo->count() - 1;
    }
    combo->setCurrentIndex(index);
}

std::string data_of(const QComboBox* combo) { return combo->currentData().toString().toStdString(); }

// The enumerated value a combo shows (its items carry the option's names).
template <typename E>
E choice_of(const QComboBox* combo, E fallback) {
    return accum::parse_choice<E>(data_of(combo)).value_or(fallback);
}

template <typename E>
void select_choice(QComboBox* combo, E value) {
    select_data(combo, accum::to_string(value));
}

} // namespace

ConfigPanel::ConfigPanel(QWidget* parent) : QWidget(parent) {
    mode_ = make_combo(QStringLiteral("mode"), accum::choice_names<accum::Mode>());
    dataset_ = make_combo(QStringLiteral("dataset"), accum::choice_names<accum::DatasetKind>());
    data_path_ = new QLineEdit;
    data_path_->setObjectName(QStringLiteral("data_path"));
    model_ = make_combo(QStringLiteral("model"), accum::choice_names<accum::ModelKind>());
    model_file_ = new QLineEdit;
    model_file_->setObjectName(QStringLiteral("model_file"));
    texts_.add([this] {
        set_item_text(mode_, "pytorch", tr("PyTorch loop"));
        set_item_text(mode_, "accelerator", tr("Accelerator"));
        set_item_text(mode_, "trainer", tr("Trainer"));
        mode_->setToolTip(tr("The API style: the explicit PyTorch loop, Hugging Face Accelerate, or the Transformers Trainer"));
        data_path_->setPlaceholderText(tr("default location"));
        set_item_text(model_, "file", tr("from file…"));
        model_->setToolTip(tr("A built-in model, or your own: a TorchScript file made with torch.jit.script or "
                              "torch.jit.trace, or a training step compiled into a .pt2 package by "
                              "examples/accum_pt2.py (examples/ shows how)"));
        model_file_->setPlaceholderText(tr("model.pt (TorchScript) or model.pt2 (compiled step)"));
        model_file_->setToolTip(tr("The TorchScript module to train. Its forward gets the batch's input_ids (or inputs), "
                                   "attention_mask and labels by argument name, and returns logits, a loss, or a "
                                   "Transformers model's (loss, logits). Or a .pt2 package of the whole training "
                                   "step (examples/accum_pt2.py, hf_to_accum.py --format pt2), which needs the "
                                   "LibTorch 2.x build."));
    });
    model_file_row_ = browse_row(model_file_, QStringLiteral("browse_model_file"),
                                 QT_TR_NOOP("Choose a TorchScript file or a .pt2 package"),
                                 &ConfigPanel::choose_model_file);
    model_file_row_->setObjectName(QStringLiteral("model_file_row"));
    auto* data_row = browse_row(data_path_, QStringLiteral("browse_data"),
                                QT_TR_NOOP("Choose the data: a folder for Fashion-MNIST, a file for csv and tensors"),
                                &ConfigPanel::choose_data);

    // The spin boxes take any value a user may type, 0 and too large ones too: the
    // form explains what is out of range (field_problems(), accum::validate()) where
    // a narrower range would silently refuse the keystroke or revert the value.
    batch_size_ = make_spin(QStringLiteral("batch_size"), 0, 99999999);
    accumulation_steps_ = make_spin(QStringLiteral("accumulation_steps"), 0, 99999999);
    processes_ = make_spin(QStringLiteral("nproc_per_node"), 0, 9999);
    effective_batch_ = new QLabel;
    effective_batch_->setObjectName(QStringLiteral("effective_batch"));
    effective_batch_->setStyleSheet(QStringLiteral("font-weight: bold; font-size: 13pt; color: #1f4e99;"));
    effective_batch_->setWordWrap(true);
    effective_batch_->setTextFormat(Qt::RichText);
    noise_advice_ = new QLabel;
    noise_advice_->setObjectName(QStringLiteral("noise_advice"));
    noise_advice_->setWordWrap(true);
    gradient_checkpointing_ = new QCheckBox;
    gradient_checkpointing_->setObjectName(QStringLiteral("gradient_checkpointing"));
    texts_.add([this] {
        batch_size_->setToolTip(tr("Micro-batch size B: samples per forward/backward pass. Memory grows with B."));
        accumulation_steps_->setToolTip(tr("K: micro-batches whose gradients add up in .grad before one optimizer step"));
        processes_->setToolTip(tr("Data parallel: N processes on this machine, each with its own micro-batches of B; "
                                  "their gradients are averaged (all-reduce) once per update. The effective batch is "
                                  "B × K × N."));
        gradient_checkpointing_->setText(tr("Gradient checkpointing"));
        gradient_checkpointing_->setToolTip(tr("Keep fewer activations in the forward and recompute them in backward (or "
                                               "run a block in slices of the batch): less activation memory, some extra "
                                               "time"));
    });
    estimate_ = new QLabel;
    estimate_->setObjectName(QStringLiteral("memory_estimate"));
    estimate_->setWordWrap(true);
    estimate_->setTextFormat(Qt::PlainText);
    estimator_ = new MemoryEstimator(this);
    connect(estimator_, &MemoryEstimator::estimating, this, [this] {
        // The last estimate stays, greyed, while the next is computed: a one-line
        // "estimating…" between two three-line estimates moved every field below it
        // (and the whole form, scrolled to its end) at each keystroke.
        if (estimate_->text().isEmpty()) estimate_->setText(tr("Memory: estimating…"));
        estimate_->setStyleSheet(QStringLiteral("color: palette(mid);"));
    });
    connect(estimator_, &MemoryEstimator::estimated, this, &ConfigPanel::show_estimate);

    learning_rate_ = new QDoubleSpinBox;
    learning_rate_->setObjectName(QStringLiteral("learning_rate"));
    learning_rate_->setDecimals(5);
    learning_rate_->setRange(0.0, 999999.0);
    learning_rate_->setSingleStep(0.001);
    optimizer_ = make_combo(QStringLiteral("optimizer"), accum::choice_names<accum::OptimizerKind>());
    momentum_ = new QDoubleSpinBox;
    momentum_->setObjectName(QStringLiteral("momentum"));
    momentum_->setDecimals(3);
    momentum_->setRange(0.0, 0.999);
    momentum_->setSingleStep(0.05);
    scheduler_ = make_combo(QStringLiteral("scheduler"), accum::choice_names<accum::SchedulerKind>());
    epochs_ = make_spin(QStringLiteral("epochs"), 0, 99999999);
    max_steps_ = make_spin(QStringLiteral("max_steps"), 0, INT_MAX);
    loss_normalization_ = make_combo(QStringLiteral("loss_normalization"), accum::choice_names<accum::LossNormalization>());
    texts_.add([this] {
        epochs_->setSpecialValueText(tr("unset"));
        max_steps_->setSpecialValueText(tr("unset"));
        max_steps_->setToolTip(tr("Optimizer steps; 0 = decided by the epochs"));
        loss_normalization_->setToolTip(tr("tokens: divide by the token count of the whole window (num_items_in_batch)"));
    });
    seed_ = make_spin(QStringLiteral("seed"), 0, INT_MAX);

    device_ = new QComboBox;
    device_->setObjectName(QStringLiteral("device"));
    // Device descriptions are long: the field keeps a width that fits small screens.
    device_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    device_->setMinimumContentsLength(14);
    device_->addItem(QString(), QStringLiteral("auto"));
    texts_.add([this] { device_->setItemText(0, tr("Automatic")); });
    auto* device_model = qobject_cast<QStandardItemModel*>(device_->model());
    for (const auto& d : accum::list_devices()) {
        have_cuda_ = have_cuda_ || (d.available && d.name != "cpu");
        const auto name = QString::fromStdString(d.name);
        device_->addItem(QStringLiteral("%1 — %2").arg(name, QString::fromStdString(d.description)), name);
        auto* item = device_model->item(device_->count() - 1);
        if (!d.available) {
            item->setFlags(item->flags() & ~(Qt::ItemIsEnabled | Qt::ItemIsSelectable));
            texts_.add([item, reason = QString::fromStdString(d.reason)] {
                item->setToolTip(tr("Unavailable: %1").arg(reason));
            });
        } else {
            item->setToolTip(QString::fromStdString(d.description));
        }
    }
    precision_ = make_combo(QStringLiteral("mixed_precision"), accum::choice_names<accum::MixedPrecision>());
    texts_.add([this] {
        set_item_text(precision_, "no", tr("fp32"));
        set_item_text(precision_, "bf16", tr("bf16 (autocast)"));
        set_item_text(precision_, "fp16", tr("fp16 (autocast, CUDA)"));
        precision_->setToolTip(tr("Mixed precision: the forward and the loss under autocast in bf16 or fp16; the "
                                  "weights, their gradients and the optimizer stay fp32. fp16 needs CUDA and brings a "
                                  "loss scaler."));
    });
    if (!have_cuda_) {
        // As the engine refuses it: fp16 autocast is CUDA's (LibTorch's CPU autocast is bf16).
        auto* fp16 = qobject_cast<QStandardItemModel*>(precision_->model())->item(precision_->findData("fp16"));
        fp16->setFlags(fp16->flags() & ~(Qt::ItemIsEnabled | Qt::ItemIsSelectable));
        texts_.add([fp16] { fp16->setToolTip(tr("Unavailable: fp16 needs CUDA; use bf16 on the CPU")); });
    }
    loss_scaling_ = make_combo(QStringLiteral("loss_scaling"), accum::choice_names<accum::LossScaling>());
    memory_budget_ = new QLineEdit;
    memory_budget_->setObjectName(QStringLiteral("memory_budget"));
    pace_ms_ = make_spin(QStringLiteral("pace_ms"), 0, 5000);
    output_dir_ = new QLineEdit;
    output_dir_->setObjectName(QStringLiteral("output_dir"));
    auto* output_row = browse_row(output_dir_, QStringLiteral("browse_output_dir"),
                                  QT_TR_NOOP("Choose a directory for metrics and checkpoints"),
                                  &ConfigPanel::choose_output_dir);
    report_tensorboard_ = new QCheckBox;
    report_tensorboard_->setObjectName(QStringLiteral("report_to_tensorboard"));
    // Runs are saved unless the box is unticked (runs_folder.h): unticked, the
    // field reads "none" and nothing is written; the folder is kept for later.
    save_runs_ = new QCheckBox;
    save_runs_->setObjectName(QStringLiteral("save_runs"));
    texts_.add([this] {
        set_item_text(loss_scaling_, "none", tr("none"));
        set_item_text(loss_scaling_, "dynamic", tr("dynamic (GradScaler)"));
        loss_scaling_->setToolTip(tr("A dynamic loss scaler: each micro-batch's loss × S before backward; once per "
                                     "window the gradients are divided by S, a window with inf/NaN gradients is "
                                     "skipped and S halves. Always on with fp16."));
        memory_budget_->setToolTip(tr("Tensor memory the run may use, e.g. 40MiB or 2GiB; 0 = no limit. "
                                      "Going over it ends the run with out-of-memory."));
        pace_ms_->setSuffix(tr(" ms"));
        pace_ms_->setSpecialValueText(tr("full speed"));
        pace_ms_->setToolTip(tr("Teaching pace: pause after every micro-batch so a class can follow"));
        output_dir_->setPlaceholderText(tr("none (nothing written)"));
        output_dir_->setToolTip(tr("Each run gets a new folder in here, named after the time it started, with its "
                                   "accum_config.json, metrics.jsonl, summary.json and checkpoints"));
        report_tensorboard_->setText(tr("Report to TensorBoard"));
        report_tensorboard_->setToolTip(tr("Also write TensorBoard event files, with the Trainer's tags, into each "
                                           "run's folder under runs/ (the Trainer's report_to; needs a folder to save "
                                           "runs in)"));
        save_runs_->setAccessibleName(tr("Save runs"));
        save_runs_->setToolTip(tr("Untick to save nothing: runs are then not written to disk"));
    });
    static_cast<QHBoxLayout*>(output_row->layout())->insertWidget(0, save_runs_);
    browse_output_dir_ = output_row->findChild<QToolButton*>(QStringLiteral("browse_output_dir"));

    // Titles and labels are source texts (QT_TR_NOOP), translated each time they are set.
    auto make_group = [this](const char* title) {
        auto* group = new QGroupBox;
        texts_.add([group, title] { group->setTitle(tr(title)); });
        auto* form = new QFormLayout(group);
        form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
        return std::pair{group, form};
    };
    auto [what, what_form] = make_group(QT_TR_NOOP("Experiment"));
    add_field(what_form, QT_TR_NOOP("Style"), mode_);
    add_field(what_form, QT_TR_NOOP("Dataset"), dataset_);
    add_field(what_form, QT_TR_NOOP("Data path"), data_path_, data_row);
    add_field(what_form, QT_TR_NOOP("Model"), model_);
    add_field(what_form, QT_TR_NOOP("Model file"), model_file_, model_file_row_);
    model_file_label_ = what_form->labelForField(model_file_row_);
    auto [batching, batching_form] = make_group(QT_TR_NOOP("Batching"));
    add_field(batching_form, QT_TR_NOOP("Micro-batch (B)"), batch_size_);
    add_field(batching_form, QT_TR_NOOP("Accumulation (K)"), accumulation_steps_);
    add_field(batching_form, QT_TR_NOOP("Processes (N)"), processes_);
    auto* effective_label = new QLabel;
    auto* memory_label = new QLabel;
    noise_advice_label_title_ = new QLabel;
    texts_.add([this, effective_label, memory_label] {
        effective_label->setText(tr("Effective batch"));
        memory_label->setText(tr("Memory"));
        noise_advice_label_title_->setText(tr("Noise scale"));
    });
    batching_form->addRow(effective_label, effective_batch_);
    batching_form->addRow(noise_advice_label_title_, noise_advice_);
    noise_advice_label_title_->hide();
    noise_advice_->hide();
    add_field(batching_form, nullptr, gradient_checkpointing_); // the box says its name
    batching_form->addRow(memory_label, estimate_);
    auto [optim, optim_form] = make_group(QT_TR_NOOP("Optimisation"));
    add_field(optim_form, QT_TR_NOOP("Learning rate"), learning_rate_);
    add_field(optim_form, QT_TR_NOOP("Optimizer"), optimizer_);
    add_field(optim_form, QT_TR_NOOP("Momentum"), momentum_);
    add_field(optim_form, QT_TR_NOOP("Scheduler"), scheduler_);
    add_field(optim_form, QT_TR_NOOP("Epochs"), epochs_);
    add_field(optim_form, QT_TR_NOOP("Max steps"), max_steps_);
    add_field(optim_form, QT_TR_NOOP("Loss normalisation"), loss_normalization_);
    auto [env, env_form] = make_group(QT_TR_NOOP("Environment"));
    add_field(env_form, QT_TR_NOOP("Seed"), seed_);
    add_field(env_form, QT_TR_NOOP("Device"), device_);
    add_field(env_form, QT_TR_NOOP("Precision"), precision_);
    add_field(env_form, QT_TR_NOOP("Loss scaling"), loss_scaling_);
    add_field(env_form, QT_TR_NOOP("Memory budget"), memory_budget_);
    add_field(env_form, QT_TR_NOOP("Pace"), pace_ms_);
    add_field(env_form, QT_TR_NOOP("Save runs in"), output_dir_, output_row);
    add_field(env_form, nullptr, report_tensorboard_); // the box says its name

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(what);
    layout->addWidget(batching);
    layout->addWidget(optim);
    layout->addWidget(env);
    layout->addStretch(1);

    widget_for_option_ = {
        {"mode", mode_}, {"dataset", dataset_}, {"data", data_path_}, {"model", model_},
        {"batch-size", batch_size_}, {"accumulation-steps", accumulation_steps_}, {"nproc-per-node", processes_},
        {"lr", learning_rate_},
        {"optimizer", optimizer_}, {"momentum", momentum_}, {"scheduler", scheduler_}, {"epochs", epochs_},
        {"max-steps", max_steps_}, {"loss-normalization", loss_normalization_}, {"seed", seed_},
        {"device", device_}, {"mixed-precision", precision_}, {"loss-scaling", loss_scaling_},
        {"loss-scale-init", loss_scaling_}, {"scaler-per-micro-batch", loss_scaling_},
        {"memory-budget", memory_budget_}, {"output-dir", output_dir_},
        {"gradient-checkpointing", gradient_checkpointing_},
        {"report-to", report_tensorboard_},
    };
    connect(gradient_checkpointing_, &QCheckBox::toggled, this, &ConfigPanel::revalidate);
    connect(report_tensorboard_, &QCheckBox::toggled, this, &ConfigPanel::revalidate);

    for (auto* combo :
         {mode_, dataset_, model_, optimizer_, scheduler_, loss_normalization_, device_, precision_, loss_scaling_})
        connect(combo, &QComboBox::currentIndexChanged, this, &ConfigPanel::revalidate);
    for (auto* spin : {batch_size_, accumulation_steps_, processes_, epochs_, max_steps_, seed_, pace_ms_})
        connect(spin, &QSpinBox::valueChanged, this, &ConfigPanel::revalidate);
    for (auto* spin : {learning_rate_, momentum_})
        connect(spin, &QDoubleSpinBox::valueChanged, this, &ConfigPanel::revalidate);
    for (auto* edit : {data_path_, model_file_, memory_budget_, output_dir_})
        connect(edit, &QLineEdit::textChanged, this, &ConfigPanel::revalidate);

    set_config(accum::RunConfig{});

    const auto runs = configured_runs_folder();
    kept_runs_folder_ = runs.folder;
    save_runs_->setChecked(runs.save);
    show_saving_runs(runs.save);
    connect(save_runs_, &QCheckBox::toggled, this, [this](bool save) {
        show_saving_runs(save);
        store_runs_folder();
    });
    connect(output_dir_, &QLineEdit::textChanged, this, &ConfigPanel::store_runs_folder);
}

accum::RunConfig ConfigPanel::config() const {
    accum::RunConfig c = base_;
    c.mode = choice_of(mode_, c.mode);
    c.dataset = choice_of(dataset_, c.dataset);
    c.data_path = data_path_->text().trimmed().toStdString();
    c.model = choice_of(model_, c.model);
    c.model_file = c.model == accum::ModelKind::File ? model_file_->text().trimmed().toStdString() : std::string();
    c.batch_size = batch_size_->value();
    c.accumulation_steps = accumulation_steps_->value();
    c.nproc_per_node = processes_->value(); // processes on this machine: the studio runs no other's
    c.nnodes = 1;
    c.node_rank = 0;
    c.gradient_checkpointing = gradient_checkpointing_->isChecked();
    c.learning_rate = learning_rate_->value();
    c.optimizer = choice_of(optimizer_, c.optimizer);
    c.momentum = momentum_->value();
    c.scheduler = choice_of(scheduler_, c.scheduler);
    c.epochs = epochs_->value();
    c.max_steps = max_steps_->value();
    c.loss_normalization = choice_of(loss_normalization_, c.loss_normalization);
    c.seed = static_cast<std::uint64_t>(seed_->value());
    c.device = data_of(device_);
    c.mixed_precision = choice_of(precision_, c.mixed_precision);
    c.loss_scaling = choice_of(loss_scaling_, c.loss_scaling);
    const auto budget = memory_budget_->text().trimmed();
    c.memory_budget = budget.isEmpty() ? std::string("0") : budget.toStdString();
    c.micro_step_delay_s = pace_ms_->value() / 1000.0;
    c.output_dir = output_dir_->text().trimmed().toStdString();
    c.report_to = report_tensorboard_->isChecked() ? "tensorboard" : "none";
    return c;
}

void ConfigPanel::set_config(const accum::RunConfig& c) {
    updating_ = true;
    setMinimumHeight(0); // a new configuration: the form takes its own height again
    base_ = c;
    select_choice(mode_, c.mode);
    select_choice(dataset_, c.dataset);
    data_path_->setText(QString::fromStdString(c.data_path));
    select_choice(model_, c.model);
    model_file_->setText(QString::fromStdString(c.model_file));
    batch_size_->setValue(static_cast<int>(std::min<std::int64_t>(c.batch_size, batch_size_->maximum())));
    accumulation_steps_->setValue(
        static_cast<int>(std::min<std::int64_t>(c.accumulation_steps, accumulation_steps_->maximum())));
    processes_->setValue(std::clamp(c.nproc_per_node, 1, processes_->maximum()));
    gradient_checkpointing_->setChecked(c.gradient_checkpointing);
    learning_rate_->setValue(c.learning_rate);
    select_choice(optimizer_, c.optimizer);
    momentum_->setValue(c.momentum);
    select_choice(scheduler_, c.scheduler);
    epochs_->setValue(static_cast<int>(std::min<std::int64_t>(c.epochs, epochs_->maximum())));
    max_steps_->setValue(static_cast<int>(std::min<std::int64_t>(c.max_steps, max_steps_->maximum())));
    select_choice(loss_normalization_, c.loss_normalization);
    seed_->setValue(static_cast<int>(std::min<std::uint64_t>(c.seed, INT_MAX)));
    select_data(device_, c.device);
    select_choice(precision_, c.mixed_precision);
    select_choice(loss_scaling_, c.loss_scaling);
    memory_budget_->setText(QString::fromStdString(c.memory_budget));
    pace_ms_->setValue(static_cast<int>(std::lround(c.micro_step_delay_s * 1000.0)));
    // Where runs are saved is the studio's setting: a configuration that names no
    // folder leaves it as it is (a lesson's, a reset's).
    if (!c.output_dir.empty()) {
        save_runs_->setChecked(true);
        output_dir_->setText(QString::fromStdString(c.output_dir));
    }
    report_tensorboard_->setChecked(c.report_to == "tensorboard");
    updating_ = false;
    revalidate();
}

void ConfigPanel::set_batching(std::int64_t batch_size, std::int64_t accumulation_steps, bool gradient_checkpointing) {
    updating_ = true;
    batch_size_->setValue(static_cast<int>(batch_size));
    accumulation_steps_->setValue(static_cast<int>(accumulation_steps));
    if (gradient_checkpointing) gradient_checkpointing_->setChecked(true);
    updating_ = false;
    revalidate();
}

void ConfigPanel::add_field(QFormLayout* form, const char* label, QWidget* field, QWidget* row) {
    QLabel* label_widget = label ? new QLabel : nullptr;
    if (label_widget)
        form->addRow(label_widget, row ? row : field);
    else
        form->addRow(row ? row : field);
    auto* error = new QLabel;
    error->setObjectName(field->objectName() + QStringLiteral("_error"));
    error->setWordWrap(true);
    error->setTextFormat(Qt::PlainText);
    // Red from the palette, not a style sheet: the label keeps following the window's
    // font (presentation mode enlarges it).
    QPalette red;
    red.setColor(QPalette::WindowText, QColor(0xb3261e));
    error->setPalette(red);
    form->addRow(QString(), error);
    form->setRowVisible(error, false);
    rows_.insert(field, FieldRow{QString(), error, form});
    // The name problems are reported under: the row's label, or the box's own text.
    texts_.add([this, label, label_widget, field] {
        QString name = label ? tr(label) : QString();
        if (label_widget) label_widget->setText(name);
        if (name.isEmpty())
            if (const auto* button = qobject_cast<QAbstractButton*>(field)) name = button->text();
        name.remove(QLatin1Char('&'));
        rows_[field].label = name;
    });
}

void ConfigPanel::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::LanguageChange) retranslate();
}

void ConfigPanel::retranslate() {
    texts_.apply();
    // The effective batch and the fields' problems in the new words; the
    // configuration, its validity and its estimate are what they were.
    if (!updating_ && show_problems()) Q_EMIT problems_changed();
    if (estimate_value_.ok || estimate_value_.busy || !estimate_value_.error.empty()) show_estimate(estimate_value_);
}

void ConfigPanel::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    if (!estimate_value_.ok && !estimator_->is_pending()) refresh_estimate();
}

QWidget* ConfigPanel::browse_row(QLineEdit* edit, const QString& button_name, const char* tip,
                                 void (ConfigPanel::*choose)()) {
    auto* button = new QToolButton;
    button->setText(QStringLiteral("…"));
    button->setObjectName(button_name);
    texts_.add([button, tip] { button->setToolTip(tr(tip)); });
    connect(button, &QToolButton::clicked, this, choose);
    auto* row = new QWidget;
    auto* layout = new QHBoxLayout(row);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(edit);
    layout->addWidget(button);
    return row;
}

QString ConfigPanel::model_file_filter() {
    return tr("Your model (*.pt *.pth *.ts *.torchscript *.pt2);;TorchScript (*.pt *.pth *.ts *.torchscript);;"
              "Compiled training step (*.pt2);;All files (*)");
}

void ConfigPanel::choose_model_file() {
    const auto file = QFileDialog::getOpenFileName(this, tr("Your model"), model_file_->text(), model_file_filter());
    if (file.isEmpty()) return;
    model_file_->setText(file);
    select_data(model_, "file");
}

void ConfigPanel::choose_data() {
    const auto kind = choice_of(dataset_, accum::DatasetKind::FashionMnist);
    QString path;
    if (kind == accum::DatasetKind::FashionMnist)
        path = QFileDialog::getExistingDirectory(this, tr("Fashion-MNIST folder"), data_path_->text());
    else
        path = QFileDialog::getOpenFileName(this, tr("Data file"), data_path_->text(),
                                            kind == accum::DatasetKind::Csv
                                                ? tr("CSV (*.csv);;All files (*)")
                                                : tr("Tensors saved by torch.save (*.pt *.pth);;All files (*)"));
    if (!path.isEmpty()) data_path_->setText(path);
}

void ConfigPanel::show_saving_runs(bool save) {
    if (!save) {
        if (const auto folder = output_dir_->text().trimmed(); !folder.isEmpty()) kept_runs_folder_ = folder;
        output_dir_->clear(); // the placeholder says: none (nothing written)
    } else if (output_dir_->text().trimmed().isEmpty()) {
        output_dir_->setText(kept_runs_folder_.isEmpty() ? default_runs_folder() : kept_runs_folder_);
    }
    output_dir_->setEnabled(save);
    if (browse_output_dir_) browse_output_dir_->setEnabled(save);
}

void ConfigPanel::store_runs_folder() {
    if (!save_runs_) return;
    const bool save = save_runs_->isChecked();
    if (const auto folder = output_dir_->text().trimmed(); save && !folder.isEmpty()) kept_runs_folder_ = folder;
    set_configured_runs_folder({save, kept_runs_folder_});
}

void ConfigPanel::choose_output_dir() {
    const auto dir = QFileDialog::getExistingDirectory(this, tr("Folder for runs"), output_dir_->text());
    if (!dir.isEmpty()) output_dir_->setText(dir);
}

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later

#pragma once
// The experiment's settings as a form. config() builds an accum::RunConfig
// (options the form does not show keep the values of the last set_config());
// every change, keystroke by keystroke, re-runs accum::validate() and the form's
// own checks, and shows each problem under its field in the form's words (its
// label, not the command line's option) and the interface's language. A value
// out of range stays as typed and is explained; nothing reverts it.

#include <QList>
#include <QMap>
#include <QWidget>
#include <functional>

#include "accum/run_config.h"
#include "accum/run_estimate.h"
#include "retranslate.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QSpinBox;
class QToolButton;

namespace studio {

class ConfigPanel : public QWidget {
    Q_OBJECT
public:
    explicit ConfigPanel(QWidget* parent = nullptr);

    accum::RunConfig config() const;
    void set_config(const accum::RunConfig& config);
    bool is_valid() const { return valid_; }
    // Every problem, one a line, each as its field shows it: "Learning rate: must be above 0".
    QString problems_text() const;
    // The same, one entry a problem, with the field it concerns (nullptr for none).
    struct Problem {
        QWidget* field = nullptr;
        QString text; // "Label: what is wrong", translated
    };
    const QList<Problem>& problems() const { return problems_list_; }
    // The label under `field` that explains its problem (nullptr for a field without one).
    QLabel* error_label(QWidget* field) const;
    // The experiment in one line (presentation mode folds the panel to it):
    // model, data · micro-batch B × K = effective · optimizer lr · budget · style
    QString summary_text() const;
    // The own-model file dialog's filter: TorchScript files and .pt2 packages first.
    static QString model_file_filter();
    // Every text again in the language installed now: on QEvent::LanguageChange.
    void retranslate();
    // Applies the engine's out-of-memory suggestion: same effective batch (and
    // gradient checkpointing on, when the suggestion says so).
    void set_batching(std::int64_t batch_size, std::int64_t accumulation_steps, bool gradient_checkpointing = false);

    // The planner's noise-scale line under the effective batch: where the form's
    // effective batch sits against a measured gradient noise scale (in samples),
    // measured in `source` (the live run, a run of the Runs tab) on `measured_on`
    // (noise_scale.h). NaN hides the line.
    void set_measured_noise_scale(double noise_scale, std::function<QString()> source,
                                  const accum::RunConfig& measured_on);
    QLabel* noise_advice_label() const { return noise_advice_; }
    double measured_noise_scale() const { return noise_scale_; }
    // The same when it was measured on `c`'s model and data, else 0.
    double measured_noise_scale_for(const accum::RunConfig& c) const;
    // The memory estimate beside the effective batch: asked again (debounced, on a
    // worker thread) whenever the form changes while the panel is shown, and
    // after a run (the engine estimates only between runs).
    void refresh_estimate();
    // Estimates again if the last estimate met a run (busy): called when runs end.
    void refresh_estimate_a_run_held();
    QLabel* estimate_label() const { return estimate_; }
    class MemoryEstimator* estimator() const { return estimator_; }
    // The estimate shown now (ok false while none is).
    const accum::RunMemoryEstimate& estimate() const { return estimate_value_; }

Q_SIGNALS:
    void config_changed();
    // The problems changed (problems()).
    void problems_changed();
    void validity_changed(bool valid);

protected:
    void showEvent(class QShowEvent* event) override;
    void changeEvent(QEvent* event) override;
    void resizeEvent(class QResizeEvent* event) override;
    bool event(QEvent* event) override;

private:
    void revalidate();
    // The effective batch and each field's problem set from the form as it is
    // (in the interface's language); true when the list of problems changed.
    bool show_problems();
    void show_estimate(const accum::RunMemoryEstimate& estimate);
    void keep_estimate_height();
    // A line edit with a "…" button beside it that calls `choose`.
    QWidget* browse_row(QLineEdit* edit, const QString& button_name, const char* tip, void (ConfigPanel::*choose)());
    void choose_output_dir();
    // The "Save runs in" box ticked or not, and the setting that keeps it (runs_folder.h).
    void show_saving_runs(bool save);
    void store_runs_folder();
    void choose_model_file();
    void choose_data();
    void mark(QWidget* widget, const QString& problem);
    // Adds `label` and `row` (the field itself, or a row holding it) to `form`, and
    // under it a hidden row for the field's error.
    // `label` is a source text (QT_TR_NOOP), or null for a box that says its name.
    void add_field(QFormLayout* form, const char* label, QWidget* field, QWidget* row = nullptr);
    // The form's own checks of the values a user types, in its words; accum::validate()
    // says the rest.
    QList<Problem> field_problems(const accum::RunConfig& c) const;
    QString effective_batch_text(const accum::RunConfig& c) const;
    void show_noise_advice(const accum::RunConfig& c);

    struct FieldRow {
        QString label;
        QLabel* error = nullptr;
        QFormLayout* form = nullptr;
    };

    Retexts texts_;
    accum::RunConfig base_;
    bool valid_ = true;
    bool updating_ = false;
    bool have_cuda_ = false; // a CUDA device is available (--device auto would use it)
    QComboBox* mode_ = nullptr;
    QComboBox* dataset_ = nullptr;
    QLineEdit* data_path_ = nullptr;
    QComboBox* model_ = nullptr;
    QLineEdit* model_file_ = nullptr;   // shown with the model "from file…"
    QWidget* model_file_row_ = nullptr;
    QWidget* model_file_label_ = nullptr;
    QSpinBox* batch_size_ = nullptr;
    QSpinBox* accumulation_steps_ = nullptr;
    QSpinBox* processes_ = nullptr;
    QLabel* effective_batch_ = nullptr;
    QLabel* noise_advice_label_title_ = nullptr;
    QLabel* noise_advice_ = nullptr;
    double noise_scale_ = 0.0; // 0: none measured
    std::function<QString()> noise_source_; // in the language of the moment
    accum::RunConfig noise_config_;
    QCheckBox* gradient_checkpointing_ = nullptr;
    QCheckBox* report_tensorboard_ = nullptr; // report_to: "tensorboard" or "none"
    QLabel* estimate_ = nullptr;
    class MemoryEstimator* estimator_ = nullptr;
    accum::RunMemoryEstimate estimate_value_;
    QDoubleSpinBox* learning_rate_ = nullptr;
    QComboBox* optimizer_ = nullptr;
    QDoubleSpinBox* momentum_ = nullptr;
    QComboBox* scheduler_ = nullptr;
    QSpinBox* epochs_ = nullptr;
    QSpinBox* max_steps_ = nullptr;
    QComboBox* loss_normalization_ = nullptr;
    QSpinBox* seed_ = nullptr;
    QComboBox* device_ = nullptr;
    QComboBox* precision_ = nullptr;
    QComboBox* loss_scaling_ = nullptr;
    QLineEdit* memory_budget_ = nullptr;
    QSpinBox* pace_ms_ = nullptr;
    QLineEdit* output_dir_ = nullptr;
    QCheckBox* save_runs_ = nullptr;
    QToolButton* browse_output_dir_ = nullptr;
    QString kept_runs_folder_; // the folder while saving is off
    QList<Problem> problems_list_;
    QMap<QWidget*, FieldRow> rows_;
    QMap<QString, QWidget*> widget_for_option_;
};

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later

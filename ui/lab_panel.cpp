#include "lab_panel.h"

#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <qcustomplot.h>

#include "lab_verdict.h"
#include "link_curve.h"

namespace studio {

LabPanel::LabPanel(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("lab_panel"));
    queue_ = new ExperimentQueue(this);
    connect(queue_, &ExperimentQueue::run_started, this, &LabPanel::on_run_started);
    connect(queue_, &ExperimentQueue::progress, this, &LabPanel::on_progress);
    connect(queue_, &ExperimentQueue::run_finished, this, &LabPanel::on_run_finished);
    connect(queue_, &ExperimentQueue::all_finished, this, &LabPanel::on_all_finished);

    buttons_box_ = new QWidget;
    auto* buttons = new QGridLayout(buttons_box_);
    buttons->setContentsMargins(0, 0, 0, 0);
    // One row per group under its heading, the table's order along it.
    auto* equivalence = new QLabel;
    auto* pitfalls = new QLabel;
    auto* batch = new QLabel;
    texts_.add([equivalence, pitfalls, batch] {
        equivalence->setText(tr("<b>Equivalence</b>"));
        pitfalls->setText(tr("<b>Pitfalls</b>"));
        batch->setText(tr("<b>Which batch</b>"));
    });
    buttons->addWidget(equivalence, 0, 0);
    buttons->addWidget(pitfalls, 1, 0);
    // "Which batch" sits in the plot's axis row: a third row of demos would take
    // the height a 720 px screen needs for the plots.
    auto* batch_row = new QHBoxLayout;
    batch_row->setContentsMargins(0, 0, 0, 0);
    batch_row->addWidget(batch);
    int columns[3] = {1, 1, 1};
    for (const auto& info : experiments()) {
        const int row = info.group == ExperimentGroup::Equivalence ? 0 : info.group == ExperimentGroup::Pitfall ? 1 : 2;
        auto* b = new QPushButton;
        b->setObjectName(info.object_name());
        texts_.add([b, &info] {
            b->setText(info.title_text());
            b->setToolTip(info.tooltip_text());
        });
        connect(b, &QPushButton::clicked, this, [this, e = info.experiment] { Q_EMIT experiment_requested(e); });
        if (row == 2)
            batch_row->addWidget(b);
        else
            buttons->addWidget(b, row, columns[row]++);
        buttons_.emplace_back(info.experiment, b);
    }
    cancel_ = new QPushButton;
    texts_.add([this] { cancel_->setText(tr("Cancel")); });
    cancel_->setObjectName(QStringLiteral("lab_cancel"));
    cancel_->setEnabled(false);
    connect(cancel_, &QPushButton::clicked, this, &LabPanel::cancel);
    buttons->setColumnStretch(std::max({columns[0], columns[1], columns[2]}), 1);

    explanation_ = new QLabel;
    explanation_->setObjectName(QStringLiteral("lab_explanation"));
    explanation_->setWordWrap(true);
    explanation_->setFrameShape(QFrame::StyledPanel);
    explanation_->setMargin(6);
    explanation_->setAutoFillBackground(true);
    QPalette tint;
    tint.setColor(QPalette::Window, QColor(0xeef4ff));
    explanation_->setPalette(tint);
    verdict_ = new QLabel;
    verdict_->setObjectName(QStringLiteral("lab_verdict"));
    verdict_->setWordWrap(true);
    verdict_->setStyleSheet(QStringLiteral("font-weight: bold; font-size: 11pt; padding: 2px;"));
    set_texts([] { return QString(); },
              [] {
                  return tr("Each button runs the configuration on the left in several variants, one after "
                            "another, and overlays them. Runs are kept short (inside the first epoch).");
              });

    y_axis_ = new QComboBox;
    y_axis_->setObjectName(QStringLiteral("lab_y_axis"));
    x_axis_ = new QComboBox;
    x_axis_->setObjectName(QStringLiteral("lab_x_axis"));
    for (int i = 0; i < 3; ++i) y_axis_->addItem(QString());
    for (int i = 0; i < 2; ++i) x_axis_->addItem(QString());
    texts_.add([this] {
        y_axis_->setItemText(LabAxes::Loss, tr("Loss"));
        y_axis_->setItemText(LabAxes::LearningRate, tr("Learning rate"));
        y_axis_->setItemText(LabAxes::LossScale, tr("Loss scale"));
        x_axis_->setItemText(0, tr("Optimizer steps"));
        x_axis_->setItemText(1, tr("Samples seen"));
    });
    connect(y_axis_, &QComboBox::currentIndexChanged, this, &LabPanel::draw_charts);
    connect(x_axis_, &QComboBox::currentIndexChanged, this, &LabPanel::draw_charts);
    axis_box_ = new QWidget;
    auto* axis_row = new QHBoxLayout(axis_box_);
    axis_row->setContentsMargins(0, 0, 0, 0);
    auto* plot_word = new QLabel;
    auto* against_word = new QLabel;
    texts_.add([plot_word, against_word] {
        plot_word->setText(tr("Plot:"));
        against_word->setText(tr("against"));
    });
    axis_row->addWidget(plot_word);
    axis_row->addWidget(y_axis_);
    axis_row->addWidget(against_word);
    axis_row->addWidget(x_axis_);
    axis_row->addStretch(1);
    axis_row->addLayout(batch_row);
    axis_row->addWidget(cancel_); // beside the plot it stops, not widening the row of demos

    charts_ = new LabCharts(font(), this);

    table_ = new LabTable;

    auto* lower = new QWidget;
    auto* lower_layout = new QVBoxLayout(lower);
    lower_layout->setContentsMargins(0, 0, 0, 0);
    lower_layout->addWidget(verdict_);
    lower_layout->addWidget(table_, 1);
    auto* plot_box = new QWidget;
    auto* plot_layout = new QVBoxLayout(plot_box);
    plot_layout->setContentsMargins(0, 0, 0, 0);
    plot_layout->addWidget(axis_box_);
    auto* plots_row = new QHBoxLayout;
    plots_row->setContentsMargins(0, 0, 0, 0);
    plots_row->addWidget(charts_->plot(), 3);
    plots_row->addWidget(charts_->memory_bars(), 2);
    if (const auto curve = measured_link_curve()) {
        // Not this machine's runs: the benchmark's, on two hosts and a shaped link.
        link_curve_ = new QCustomPlot;
        link_curve_->setObjectName(QStringLiteral("lab_link_curve"));
        link_curve_->setMinimumHeight(200);
        link_curve_->plotLayout()->insertRow(0);
        auto* title = new QCPTextElement(link_curve_, QString(), QFont(font().family(), 9, QFont::Bold));
        link_curve_->plotLayout()->addElement(0, 0, title);
        link_curve_->legend->setVisible(true);
        link_curve_->legend->setFont(font());
        link_curve_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
        texts_.add([this, title, curve = *curve] {
            title->setText(tr("Measured on two hosts: where no_sync pays") +
                           QStringLiteral("\n%1\n%2").arg(curve.link, curve.measured));
            // Drawn again: its names and axis labels are in the language of the moment.
            link_curve_->clearItems();
            link_curve_->clearGraphs();
            draw_link_curve(link_curve_, curve, font());
        });
        curve_look_.capture(link_curve_);
        link_curve_->setVisible(false);
        // The lab's own curves keep their share: this one takes what the row gives it.
        link_curve_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Expanding);
        link_curve_->setMinimumWidth(320);
        plots_row->addWidget(link_curve_, 3);
    }
    plot_layout->addLayout(plots_row, 1);
    auto* split = split_ = new QSplitter(Qt::Vertical);
    split->addWidget(plot_box);
    split->addWidget(lower);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(buttons_box_);
    layout->addWidget(explanation_);
    layout->addWidget(split, 1);
}

QPushButton* LabPanel::button(Experiment experiment) const {
    for (const auto& [e, b] : buttons_)
        if (e == experiment) return b;
    return nullptr;
}

void LabPanel::run_experiment(Experiment experiment) {
    if (queue_->is_running() || !base_) return;
    experiment_ = experiment;
    const auto base = base_();
    const auto runs = plan_experiment(experiment, base, noise_scale_ ? noise_scale_(base) : 0.0,
                                      shapes_ ? shapes_() : ExperimentShapes{});
    shown_.clear();
    table_->setRowCount(0);
    set_texts([count = runs.size()] { return LabVerdict::planned(count); },
              [experiment] { return experiment_info(experiment).explanation_text(); });
    y_axis_->setCurrentIndex(experiment == Experiment::PitfallScheduler   ? LabAxes::LearningRate
                             : experiment == Experiment::PitfallLossScale ? LabAxes::LossScale
                                                                          : LabAxes::Loss);
    x_axis_->setCurrentIndex(experiment == Experiment::CompareAccumulation || experiment == Experiment::NoiseScale ? 1 : 0);
    charts_->show_memory_bars(experiment == Experiment::MemoryLevers);
    if (link_curve_) link_curve_->setVisible(experiment == Experiment::NoSyncVsSyncEach);
    charts_->clear();
    queue_->start(runs);
    // Told after the start: the window then reads is_running() as true (engine_use.h).
    if (queue_->is_running()) set_busy(true);
}

void LabPanel::cancel() { queue_->cancel(); }

void LabPanel::set_experiments_enabled(bool enabled) {
    for (const auto& [e, b] : buttons_) b->setEnabled(enabled);
}

void LabPanel::set_busy(bool busy) {
    cancel_->setEnabled(busy);
    Q_EMIT busy_changed(busy);
}

void LabPanel::on_run_started(int index, const QString& label) {
    set_texts([index, count = queue_->planned_count(), label] { return LabVerdict::running(index, count, label); },
              explanation_text_);
    shown_.resize(static_cast<std::size_t>(index + 1));
    shown_[static_cast<std::size_t>(index)].label = label;
    draw_charts();
}

void LabPanel::on_progress(int index, const RunResult& partial) {
    if (index < 0) return;
    shown_.resize(std::max(shown_.size(), static_cast<std::size_t>(index + 1)));
    shown_[static_cast<std::size_t>(index)] = partial;
    draw_charts();
}

void LabPanel::on_run_finished(int index, const RunResult& result) {
    shown_.resize(std::max(shown_.size(), static_cast<std::size_t>(index + 1)));
    shown_[static_cast<std::size_t>(index)] = result;
    draw_charts();
    fill_table();
    Q_EMIT run_finished(result);
}

// Every run's table row and curves are drawn as it finishes (the queue ends
// with the last one's run_finished): what is left is the verdict.
void LabPanel::on_all_finished() {
    set_busy(false);
    set_texts([this] { return LabVerdict::finished(experiment_, queue_->results()); }, explanation_text_);
    Q_EMIT experiment_finished();
}

void LabPanel::set_texts(std::function<QString()> verdict, std::function<QString()> explanation) {
    verdict_text_ = std::move(verdict);
    explanation_text_ = std::move(explanation);
    verdict_->setText(verdict_text_());
    explanation_->setText(explanation_text_());
}

void LabPanel::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::LanguageChange) retranslate();
}

void LabPanel::retranslate() {
    texts_.apply();
    charts_->retranslate();
    table_->retranslate();
    set_texts(verdict_text_, explanation_text_);
    if (shown_.empty()) return; // no experiment yet: the plot's axes are unnamed
    fill_table();
    draw_charts();
}

void LabPanel::set_presentation_scale(double scale) {
    scale_ = scale;
    // The verdict too: the table has its numbers, and the lesson's bar says what they
    // mean. The table's coloured run names are the legend.
    for (auto* desk_only : std::initializer_list<QWidget*>{buttons_box_, explanation_, axis_box_, verdict_})
        desk_only->setVisible(scale <= 1.0);
    charts_->set_presentation_scale(scale);
    split_->setStretchFactor(1, scale > 1.0 ? 0 : 2);
    fill_table(); // the columns shown in this mode, the table as tall as its rows
    if (link_curve_) {
        curve_look_.apply(scale);
        PlotLook::legend_below(link_curve_, scale > 1.0, 1);
    }
    verdict_->setStyleSheet(
        QStringLiteral("font-weight: bold; font-size: %1pt; padding: 2px;").arg(11.0 * scale, 0, 'f', 1));
    draw_charts();
}

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later

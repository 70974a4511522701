#include "code_panel.h"

#include <QEvent>
#include <QApplication>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFontInfo>
#include <QFontMetricsF>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QStyle>
#include <QTabWidget>
#include <QTextBlock>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "accumulation_meter.h"
#include "plot_look.h"

namespace studio {

namespace {

QPlainTextEdit* make_editor(const QString& name) {
    auto* e = new QPlainTextEdit;
    e->setObjectName(name);
    e->setReadOnly(true);
    e->setLineWrapMode(QPlainTextEdit::NoWrap);
    QFont f = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    f.setPointSizeF(std::max(9.0, f.pointSizeF()));
    e->setFont(f);
    e->setTextInteractionFlags(Qt::TextSelectableByMouse);
    return e;
}

QString style_title(const QString& mode) {
    if (mode == QLatin1String("accelerator")) return CodePanel::tr("Accelerator — the loop");
    if (mode == QLatin1String("trainer")) return CodePanel::tr("Trainer — the loop inside train()");
    return CodePanel::tr("PyTorch loop — the loop");
}

// The loss scale as a power of two where it is one (2^16), else as a number.
QString scale_text(double scale) {
    int exponent = 0;
    if (scale > 0 && std::frexp(scale, &exponent) == 0.5) return QStringLiteral("2^%1").arg(exponent - 1);
    return QString::number(scale, 'g', 4);
}

QString role_caption(LineRole role, const accum::MicroStepRecord& record, int world_size) {
    const bool scaling = record.loss_scale > 0;
    switch (role) {
    case LineRole::NoSync:
        return CodePanel::tr("no_sync(): this backward keeps its gradients local — no communication between the %1 "
                             "processes")
            .arg(world_size);
    case LineRole::AllReduce:
        return CodePanel::tr("all-reduce: the window's gradients are averaged across the %1 processes, once per update")
            .arg(world_size);
    case LineRole::Autocast:
        return CodePanel::tr("autocast: inside this scope matrix products run in lower precision (bf16/fp16); "
                             "the weights stay fp32");
    case LineRole::Forward: return CodePanel::tr("forward: the model computes this micro-batch's loss");
    case LineRole::LossScale: return CodePanel::tr("loss / K: each micro-batch counts for 1/K of the update");
    case LineRole::Backward:
        return scaling ? CodePanel::tr("scaler.scale(loss).backward(): the gradients of loss × S (S = %1) are added "
                                       "into .grad; S is the same for the whole window")
                             .arg(scale_text(record.loss_scale))
                       : CodePanel::tr("backward: gradients are added into .grad (not replaced)");
    case LineRole::Unscale:
        return CodePanel::tr("scaler.unscale_(optimizer): .grad is divided by S once, before clipping, and checked "
                             "for inf/NaN");
    case LineRole::OptimizerStep:
        return scaling ? CodePanel::tr("scaler.step(optimizer): one update with the window's gradient, skipped if a "
                                       "gradient was inf/NaN (overflow)")
                       : CodePanel::tr("optimizer.step(): one update with the gradient of the whole window");
    case LineRole::SchedulerStep: return CodePanel::tr("lr_scheduler.step(): the schedule advances once per update");
    case LineRole::ScalerUpdate:
        return CodePanel::tr("scaler.update(): once per window; S halves after an overflow and doubles after 2000 "
                             "good windows");
    case LineRole::ZeroGrad: return CodePanel::tr("zero_grad(): .grad is emptied for the next window");
    }
    return {};
}

} // namespace

CodePanel::CodePanel(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("code_panel"));
    title_ = new QLabel;
    title_->setObjectName(QStringLiteral("code_title"));
    cpp_ = make_editor(QStringLiteral("code_cpp"));
    py_ = make_editor(QStringLiteral("code_py"));
    chapter_edit_ = make_editor(QStringLiteral("code_chapter"));
    // The chapter's lines fit the panel: the font shrinks to the widest line
    // (fit_chapter_font), down to the least readable size; only below it do
    // lines wrap. Never a horizontal scroll bar.
    chapter_edit_->setLineWrapMode(QPlainTextEdit::WidgetWidth);
    chapter_edit_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    chapter_edit_->viewport()->installEventFilter(this);
    code_font_ = cpp_->font();
    tabs_ = new QTabWidget;
    tabs_->setObjectName(QStringLiteral("code_tabs"));
    tabs_->addTab(chapter_edit_, QString());
    tabs_->addTab(py_, QString());
    tabs_->addTab(cpp_, QString());
    texts_.add([this] {
        tabs_->setTabText(0, tr("Chapter"));
        tabs_->setTabToolTip(0, tr("The loop as the chapter writes it; shaded lines are added by this configuration"));
        tabs_->setTabText(1, tr("Python"));
        tabs_->setTabToolTip(1, tr("A script that runs with the real library"));
        tabs_->setTabText(2, tr("C++"));
        tabs_->setTabToolTip(2, tr("The loop the engine runs, in C++"));
    });

    auto* style = QApplication::style();
    build_up_ = new QPushButton(style->standardIcon(QStyle::SP_FileDialogListView), QString());
    build_up_->setObjectName(QStringLiteral("build_up_button"));
    build_up_->setCheckable(true);
    // Icons only: beside the tabs they leave the tabs their room; the tooltips name them.
    previous_line_ = new QPushButton(style->standardIcon(QStyle::SP_ArrowUp), QString());
    previous_line_->setObjectName(QStringLiteral("previous_line_button"));
    previous_line_->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Up));
    next_line_ = new QPushButton(style->standardIcon(QStyle::SP_ArrowDown), QString());
    next_line_->setObjectName(QStringLiteral("next_line_button"));
    next_line_->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Down));
    texts_.add([this] {
        build_up_->setAccessibleName(tr("Build up"));
        build_up_->setToolTip(tr("Build up: reveal the chapter's loop a line at a time, each with why"));
        previous_line_->setAccessibleName(tr("Previous line"));
        previous_line_->setToolTip(tr("Previous line: hide the last line shown (Alt+Up)"));
        next_line_->setAccessibleName(tr("Next line"));
        next_line_->setToolTip(tr("Next line: show the loop's next line and why it is there (Alt+Down)"));
    });
    connect(build_up_, &QPushButton::toggled, this, [this](bool on) {
        if (on != building_up()) on ? start_build_up() : end_build_up();
    });
    connect(previous_line_, &QPushButton::clicked, this, &CodePanel::previous_line);
    connect(next_line_, &QPushButton::clicked, this, &CodePanel::next_line);
    why_ = new QLabel;
    why_->setObjectName(QStringLiteral("build_up_why"));
    why_->setWordWrap(true);
    why_->setFrameShape(QFrame::StyledPanel);
    why_->setMargin(4);
    why_->setAutoFillBackground(true);
    QPalette blue;
    blue.setColor(QPalette::Window, QColor(0xe3eeff));
    why_->setPalette(blue);
    why_->setVisible(false);
    caption_ = new QLabel;
    caption_->setObjectName(QStringLiteral("code_caption"));
    set_caption([] { return tr("Set a teaching pace (e.g. 800 ms) and press Run: the executing lines light up."); });
    caption_->setWordWrap(true);
    caption_->setMinimumHeight(40);
    // A palette, not a style sheet, so the caption follows the window's font.
    caption_->setFrameShape(QFrame::StyledPanel);
    caption_->setMargin(4);
    caption_->setAutoFillBackground(true);
    QPalette yellow;
    yellow.setColor(QPalette::Window, QColor(0xfff7d6));
    caption_->setPalette(yellow);
    meter_ = new AccumulationMeter;
    step_button_ = new QPushButton;
    step_button_->setObjectName(QStringLiteral("step_once_button"));
    step_button_->setEnabled(false);
    connect(step_button_, &QPushButton::clicked, this, &CodePanel::step_once_requested);
    allreduces_ = new QLabel;
    allreduces_->setObjectName(QStringLiteral("allreduce_counter"));
    texts_.add([this] {
        step_button_->setText(tr("Step one micro-batch"));
        step_button_->setToolTip(tr("While paused: run exactly one more micro-batch, then pause again"));
        allreduces_->setToolTip(tr("Gradient all-reduces since the last optimizer step: 1 with no_sync, K when every "
                                   "micro-batch syncs"));
    });
    allreduces_->setVisible(false);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 0, 0, 0);
    layout->addWidget(title_);
    model_line_ = new QLabel;
    model_line_->setObjectName(QStringLiteral("code_model_line"));
    model_line_->setTextFormat(Qt::PlainText);
    model_line_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    model_line_->setWordWrap(true);
    model_line_->setVisible(false);
    layout->addWidget(model_line_);
    // The build-up's buttons beside the tabs, where they take no line of the listing's height.
    auto* build_row = new QWidget;
    build_row->setObjectName(QStringLiteral("build_up_row"));
    auto* build_layout = new QHBoxLayout(build_row);
    build_layout->setContentsMargins(0, 0, 0, 2);
    build_layout->setSpacing(2);
    build_layout->addWidget(build_up_);
    build_layout->addWidget(previous_line_);
    build_layout->addWidget(next_line_);
    tabs_->setCornerWidget(build_row, Qt::TopRightCorner);
    layout->addWidget(tabs_, 1);
    layout->addWidget(why_);
    layout->addWidget(caption_);
    layout->addWidget(meter_);
    layout->addWidget(allreduces_);
    layout->addWidget(step_button_);

    set_presentation_scale(1.0);
    phase_timer_.setSingleShot(true);
    connect(&phase_timer_, &QTimer::timeout, this, &CodePanel::next_phase);
    set_style(QStringLiteral("pytorch"));
    update_build_up();
}

void CodePanel::set_style(const QString& mode) {
    if (mode == style_) return;
    style_ = mode;
    options_.style = mode;
    rebuild_chapter();
    cpp_listing_ = load_listing(mode, QStringLiteral("cpp"));
    py_listing_ = load_listing(mode, QStringLiteral("py"));
    cpp_->setPlainText(cpp_listing_.text());
    py_->setPlainText(py_listing_.text());
    title_->setText(style_title(mode));
    lit_.clear();
    apply_highlight();
}

void CodePanel::set_configuration(const accum::RunConfig& config) {
    auto options = chapter_options(config);
    set_style(options.style);
    const bool same = options.accumulation_steps == options_.accumulation_steps &&
                      options.batch_size == options_.batch_size && options.world_size == options_.world_size &&
                      options.mixed_precision == options_.mixed_precision &&
                      options.loss_scaler == options_.loss_scaler && options.max_grad_norm == options_.max_grad_norm &&
                      options.cuda == options_.cuda;
    options_ = options;
    if (!same) rebuild_chapter();
}

void CodePanel::rebuild_chapter() {
    chapter_ = chapter_listing(options_);
    chapter_listing_ = chapter_.listing();
    const int steps = int(chapter_.step_starts().size());
    if (build_step_ >= steps) build_step_ = steps - 1;
    show_chapter_text();
    update_build_up();
}

int CodePanel::shown_chapter_lines() const {
    return building_up() ? chapter_.end_of_step(build_step_) : int(chapter_.lines.size());
}

void CodePanel::show_chapter_text() {
    const int shown = shown_chapter_lines();
    QStringList lines;
    for (int i = 0; i < shown; ++i) lines << chapter_.lines[static_cast<std::size_t>(i)].text;
    const QString text = lines.join(QLatin1Char('\n'));
    if (chapter_edit_->toPlainText() != text) chapter_edit_->setPlainText(text);
    fit_chapter_font();
    apply_highlight();
}

void CodePanel::fit_chapter_font() {
    // The desk (or presentation) size, smaller where the widest line needs it,
    // never below the least readable size: 9 pt at the desk, 1/40 of the
    // screen's height in presentation mode (plot_look.h).
    QFont font = PlotLook::scaled(code_font_, scale_);
    const int least = scale_ > 1.0 ? PlotLook::least_text_pixels(this) : QFontInfo(code_font_).pixelSize();
    const double room = chapter_edit_->viewport()->width() - 2 * chapter_edit_->document()->documentMargin() - 4;
    double widest = 0;
    const QFontMetricsF metrics(font);
    for (const auto& line : chapter_.lines) widest = std::max(widest, metrics.horizontalAdvance(line.text));
    if (room > 0 && widest > room) {
        const int pixels = QFontInfo(font).pixelSize();
        const int fit = static_cast<int>(std::floor(pixels * room / widest));
        font.setPixelSize(std::max(least, std::min(pixels, fit)));
    }
    if (chapter_edit_->font() != font) chapter_edit_->setFont(font);
}

bool CodePanel::eventFilter(QObject* watched, QEvent* event) {
    if (watched == chapter_edit_->viewport() && event->type() == QEvent::Resize) fit_chapter_font();
    return QWidget::eventFilter(watched, event);
}

void CodePanel::start_build_up() {
    build_step_ = 0;
    tabs_->setCurrentWidget(chapter_edit_);
    show_chapter_text();
    update_build_up();
}

void CodePanel::end_build_up() {
    build_step_ = -1;
    show_chapter_text();
    update_build_up();
}

void CodePanel::next_line() {
    if (!building_up()) {
        start_build_up();
        return;
    }
    build_step_ = std::min(build_step_ + 1, int(chapter_.step_starts().size()) - 1);
    show_chapter_text();
    update_build_up();
}

void CodePanel::previous_line() {
    if (!building_up()) return;
    build_step_ = std::max(0, build_step_ - 1);
    show_chapter_text();
    update_build_up();
}

void CodePanel::update_build_up() {
    const int steps = int(chapter_.step_starts().size());
    if (build_up_->isChecked() != building_up()) build_up_->setChecked(building_up());
    previous_line_->setEnabled(building_up() && build_step_ > 0);
    next_line_->setEnabled(!building_up() || build_step_ + 1 < steps);
    // While the loop builds up, its sentence takes the caption's place.
    why_->setVisible(building_up());
    caption_->setVisible(!building_up());
    if (building_up()) {
        const int start = chapter_.step_starts()[static_cast<std::size_t>(build_step_)];
        why_->setText(tr("Line %1 of %2: %3")
                          .arg(build_step_ + 1)
                          .arg(steps)
                          .arg(chapter_.lines[static_cast<std::size_t>(start)].why));
    }
}

void CodePanel::set_model_file(const QString& file) {
    model_file_ = file;
    const auto name = QFileInfo(file).fileName();
    model_line_->setText(name.endsWith(QStringLiteral(".pt2"))
                             ? tr("step = load_package(\"%1\", \"train\")   # your compiled step: loss, logits and "
                                  "gradients from one call, added up by the loop below")
                                   .arg(name)
                             : tr("model = torch.jit.load(\"%1\")   # your module: the loop below trains it as it "
                                  "trains the built-in ones")
                                   .arg(name));
    model_line_->setVisible(!file.isEmpty());
}

void CodePanel::set_caption(std::function<QString()> text) {
    caption_text_ = std::move(text);
    caption_->setText(caption_text_());
}

void CodePanel::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::LanguageChange) retranslate();
}

void CodePanel::retranslate() {
    texts_.apply();
    title_->setText(style_title(style_));
    if (!model_line_->text().isEmpty()) set_model_file(model_file_);
    if (caption_text_) caption_->setText(caption_text_());
    if (!allreduces_->text().isEmpty()) show_allreduces(allreduces_this_update_);
    rebuild_chapter(); // the Chapter view's notes (and the build-up's line) in the new language
}

void CodePanel::preview_accumulation_steps(int accumulation_steps) {
    if (meter_->window_size() != std::max(1, accumulation_steps)) meter_->reset(accumulation_steps);
}

void CodePanel::start_run(int accumulation_steps, int pace_ms, int world_size) {
    pace_ms_ = pace_ms;
    world_size_ = std::max(1, world_size);
    allreduces_->setVisible(world_size_ > 1);
    allreduces_step_ = -1;
    show_allreduces(0);
    queue_.clear();
    phase_timer_.stop();
    phase_ = -1;
    lit_.clear();
    lit_history_.clear();
    if (options_.accumulation_steps != accumulation_steps || options_.world_size != world_size_) {
        options_.accumulation_steps = std::max(1, accumulation_steps);
        options_.world_size = world_size_;
        rebuild_chapter();
    }
    meter_->reset(accumulation_steps);
    set_caption([pace_ms] {
        return pace_ms > 0 ? tr("Running at teaching pace: %1 ms per micro-batch.").arg(pace_ms)
                           : tr("Running at full speed: the lines of the latest micro-batch are shown.");
    });
    apply_highlight();
}

void CodePanel::append(const RecordBatch& batch) {
    if (batch.micro_steps.empty()) return;
    if (pace_ms_ <= 0) {
        // Full speed: no animation, the last micro-batch's lines and meter, drawn by refresh().
        current_ = batch.micro_steps.back().record;
        // The all-reduces of the update the last micro-batch belongs to.
        for (const auto& m : batch.micro_steps) {
            if (m.record.step != allreduces_step_) { // a micro-batch of the next update
                allreduces_step_ = m.record.step;
                allreduces_this_update_ = 0;
            }
            allreduces_this_update_ += m.record.grad_allreduces;
        }
        full_speed_dirty_ = true;
        return;
    }
    for (const auto& m : batch.micro_steps) queue_.push_back(m.record);
    // Never fall behind by more than a couple of micro-batches.
    while (queue_.size() > 2) queue_.pop_front();
    if (!phase_timer_.isActive() && phase_ < 0) next_phase();
}

void CodePanel::refresh() {
    if (!full_speed_dirty_) return;
    full_speed_dirty_ = false;
    current_roles_ = highlight_roles(current_, world_size_);
    meter_->show_record(current_);
    show_allreduces(allreduces_this_update_);
    lit_ = current_roles_;
    std::reverse(lit_.begin(), lit_.end());
    apply_highlight();
}

void CodePanel::next_phase() {
    if (phase_ >= 0 && phase_ + 1 < int(current_roles_.size())) {
        ++phase_;
        show_phase();
        return;
    }
    if (queue_.empty()) {
        phase_ = -1; // wait for the next record; the last lines stay lit
        return;
    }
    current_ = queue_.front();
    queue_.pop_front();
    current_roles_ = highlight_roles(current_, world_size_);
    phase_ = 0;
    show_phase();
}

void CodePanel::show_phase() {
    if (phase_ < 0 || phase_ >= int(current_roles_.size())) return;
    // The meter fills when backward has run (phase 2), and shows the update at step.
    const auto role = current_roles_[static_cast<std::size_t>(phase_)];
    if (phase_ == 0 && current_.step != allreduces_step_) { // the first micro-batch shown of an update
        allreduces_step_ = current_.step;
        show_allreduces(0);
    }
    if (role == LineRole::AllReduce) show_allreduces(allreduces_this_update_ + current_.grad_allreduces);
    if (role == LineRole::Forward && current_.window_index <= 1) {
        auto fresh = current_; // a new window starts with an empty .grad
        fresh.window_index = 0;
        fresh.sync = false;
        fresh.grad_norm = 0.0;
        meter_->show_record(fresh);
    }
    if (role == LineRole::Backward || role == LineRole::OptimizerStep) {
        auto shown = current_;
        if (role == LineRole::Backward) shown.sync = false;
        meter_->show_record(shown);
    }
    // Bounded: an hour at a second a micro-batch keeps it all; longer forgets the start.
    if (lit_history_.size() >= 50000) lit_history_.erase(lit_history_.begin(), lit_history_.begin() + 25000);
    lit_history_.push_back({current_, role});
    lit_.clear();
    lit_.push_back(role);
    for (int i = phase_ - 1; i >= 0; --i) lit_.push_back(current_roles_[static_cast<std::size_t>(i)]);
    set_caption([record = current_, role, world = world_size_] {
        return tr("Micro-batch %1 (%2 of %3 in this window): %4")
            .arg(record.micro_step)
            .arg(record.window_index)
            .arg(record.window_size)
            .arg(role_caption(role, record, world));
    });
    apply_highlight();
    // Spread the phases over the pace, a little faster so the queue drains.
    const int phases = int(current_roles_.size());
    const int interval = std::clamp(int(pace_ms_ * 0.85 / phases), 30, 600);
    phase_timer_.start(interval);
}

void CodePanel::show_allreduces(std::int64_t count) {
    allreduces_this_update_ = count;
    allreduces_->setText(tr("All-reduces this update: %1 (%2 processes)").arg(count).arg(world_size_));
}

void CodePanel::set_paused(bool paused, bool running) { step_button_->setEnabled(paused && running); }

void CodePanel::set_presentation_scale(double scale) {
    scale_ = scale;
    for (auto* button : {build_up_, previous_line_, next_line_}) button->setIconSize(QSize(16, 16) * scale);
    const QFont code = PlotLook::scaled(code_font_, scale);
    cpp_->setFont(code);
    py_->setFont(code);
    fit_chapter_font();
    // In front of a class the chapter's loop is what is read.
    if (scale > 1.0) tabs_->setCurrentWidget(chapter_edit_);
    title_->setStyleSheet(QStringLiteral("font-weight: bold; font-size: %1pt;").arg(12.0 * scale, 0, 'f', 1));
    // In front of a class the listing needs the height: the style is named in the
    // configuration line, and the toolbar has "Step one micro-batch" (F10).
    title_->setVisible(scale <= 1.0);
    step_button_->setVisible(scale <= 1.0);
}

QPlainTextEdit* CodePanel::editor(const QString& language) const {
    if (language == QLatin1String("chapter")) return chapter_edit_;
    return language == QLatin1String("cpp") ? cpp_ : py_;
}

QList<int> CodePanel::highlighted_lines(const QString& language) const {
    const bool chapter = language == QLatin1String("chapter");
    const auto& listing = chapter ? chapter_listing_ : language == QLatin1String("cpp") ? cpp_listing_ : py_listing_;
    const int shown = chapter ? shown_chapter_lines() : int(listing.lines.size());
    QList<int> lines;
    for (const auto role : lit_)
        for (int line : listing.lines_for(role))
            if (line < shown && !lines.contains(line)) lines << line;
    return lines;
}

void CodePanel::apply_highlight() {
    for (const auto& pair : {std::pair{chapter_edit_, &chapter_listing_}, std::pair{cpp_, &cpp_listing_},
                             std::pair{py_, &py_listing_}}) {
        auto* editor = pair.first;
        const auto& listing = *pair.second;
        const int blocks = editor->document()->blockCount();
        QList<QTextEdit::ExtraSelection> selections;
        auto select = [&](int line, const QTextCharFormat& format) {
            if (line >= blocks) return; // not revealed yet (the build-up)
            QTextEdit::ExtraSelection s;
            s.format = format;
            s.cursor = QTextCursor(editor->document()->findBlockByNumber(line));
            s.cursor.clearSelection();
            selections << s;
        };
        if (editor == chapter_edit_) {
            // The configuration's additions shaded; the build-up's newest lines outlined in blue.
            for (std::size_t i = 0; i < chapter_.lines.size(); ++i)
                if (chapter_.lines[i].addition) {
                    QTextCharFormat f;
                    f.setBackground(QColor(0xeee6f8));
                    f.setFontItalic(true);
                    f.setProperty(QTextFormat::FullWidthSelection, true);
                    select(int(i), f);
                }
            if (building_up()) {
                const int start = chapter_.step_starts()[static_cast<std::size_t>(build_step_)];
                for (int line = start; line < shown_chapter_lines(); ++line) {
                    QTextCharFormat f;
                    f.setBackground(QColor(0xd3e3ff));
                    f.setProperty(QTextFormat::FullWidthSelection, true);
                    select(line, f);
                }
            }
        }
        // The earlier roles first, so that a line of several roles shows the current one.
        for (std::size_t k = lit_.size(); k-- > 0;) {
            const std::size_t i = k;
            const auto role = lit_[i];
            const bool is_update = role == LineRole::Unscale || role == LineRole::OptimizerStep ||
                                   role == LineRole::SchedulerStep || role == LineRole::ScalerUpdate ||
                                   role == LineRole::ZeroGrad;
            // Communication between the processes (or its absence) in blue.
            const bool is_sync = role == LineRole::NoSync || role == LineRole::AllReduce;
            QColor colour = is_update ? QColor(0x9be3a9) : is_sync ? QColor(0x9ccaf5) : QColor(0xffd84d);
            if (i > 0) // done earlier in this micro-batch
                colour = is_update ? QColor(0xd6f3dc) : is_sync ? QColor(0xd9ebfb) : QColor(0xfff0b3);
            for (int line : listing.lines_for(role)) {
                QTextCharFormat f;
                f.setBackground(colour);
                f.setProperty(QTextFormat::FullWidthSelection, true);
                if (i == 0) f.setFontWeight(QFont::Bold);
                select(line, f);
            }
        }
        editor->setExtraSelections(selections);
        // The line that runs stays in view, even in a listing taller than its panel.
        if (!lit_.empty()) {
            const auto lines = listing.lines_for(lit_.front());
            if (!lines.isEmpty() && lines.front() < blocks) {
                editor->setTextCursor(QTextCursor(editor->document()->findBlockByNumber(lines.front())));
                editor->ensureCursorVisible();
            }
        }
    }
}

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later

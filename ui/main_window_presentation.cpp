// SPDX-License-Identifier: GPL-3.0-or-later
// MainWindow's look in front of a class: presentation mode (text and lines enlarged,
// the form folded to its one-line summary, full screen), the Live tab's focus and
// the status row fitted to the width.
#include "main_window.h"

#include <QApplication>
#include <QFontInfo>
#include <QFontMetrics>
#include <QHeaderView>
#include <QLabel>
#include <QLayout>
#include <QScreen>
#include <QSplitter>
#include <QPlainTextEdit>
#include <QToolBar>
#include <algorithm>
#include <tuple>

#include "code_panel.h"
#include "config_panel.h"
#include "lab_panel.h"
#include "plot_look.h"
#include "runs_panel.h"
#include "screen_fit.h"
#include "loss_plot.h"
#include "memory_plot.h"
#include "noise_plot.h"
#include "oom_banner.h"

namespace studio {

void MainWindow::set_live_focus(LiveFocus focus) {
    // Shares of the splitters: (plots, code) across, (loss, memory, evaluation) down.
    int plots = 60, code = 40, loss = 50, memory = 30, bottom = 20;
    // Memory: the loss plot folds away (the run ends before its first update); its
    // splitter handle brings it back.
    if (focus == LiveFocus::Memory) std::tie(plots, code, loss, memory, bottom) = std::tuple{70, 30, 0, 85, 15};
    // Code: the memory plot folds away (the mechanism is in the code and the meter).
    if (focus == LiveFocus::Code) std::tie(plots, code, loss, memory, bottom) = std::tuple{45, 55, 85, 0, 15};
    const int width = std::max(live_split_->width(), 100);
    live_split_->setSizes({width * plots / 100, width * code / 100});
    const int height = std::max(plots_split_->height(), 100);
    plots_split_->setSizes({height * loss / 100, height * memory / 100, height * bottom / 100});
}

void MainWindow::update_config_summary() {
    if (!config_summary_) return;
    // Cut with "…" where the toolbar has less room than the line (a Vietnamese
    // summary is longer), never in the middle of a letter; the tooltip has it all.
    const QString full = config_panel_->summary_text();
    const int room = config_summary_->contentsRect().width() - config_summary_->indent() - 4;
    const QString shown =
        room > 0 ? config_summary_->fontMetrics().elidedText(full, Qt::ElideRight, room) : full;
    if (config_summary_->text() != shown) config_summary_->setText(shown);
    config_summary_->setToolTip(full);
}

void MainWindow::apply_presentation_scale(double scale) {
    loss_plot_->set_presentation_scale(scale);
    memory_plot_->set_presentation_scale(scale);
    noise_plot_->set_presentation_scale(scale);
    lab_panel_->set_presentation_scale(scale);
    runs_panel_->set_presentation_scale(scale);
    code_panel_->set_presentation_scale(scale);
    oom_banner_->set_presentation_scale(scale);
    log_view_->setFont(PlotLook::scaled(log_font_, scale));
    toolbar_->setIconSize(desk_icon_size_ * scale);
    // The actions as icons (their tooltips name them): the line beside them is the
    // experiment's summary.
    toolbar_->setToolButtonStyle(scale > 1.0 ? Qt::ToolButtonIconOnly : Qt::ToolButtonTextBesideIcon);
    // Header views take their font from the style's class fonts, not from the window.
    for (auto* header : findChildren<QHeaderView*>()) header->setFont(scale > 1.0 ? font() : QFont());
    // In front of a class the row has no room for it (a 1024-pixel projector):
    // the thread count is a workstation's question, and the log still says it.
    threads_label_->setVisible(scale <= 1.0);
    live_view_->fit_labels();
}

void MainWindow::set_presentation_mode(bool on) {
    if (on == presentation_) return;
    presentation_ = on;
    if (presentation_action_->isChecked() != on) presentation_action_->setChecked(on);
    if (on) {
        desk_font_set_ = testAttribute(Qt::WA_SetFont);
        desk_font_ = font();
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
        desk_geometry_ = saveGeometry();
        desk_rect_ = geometry();
        desk_maximized_ = isMaximized();
        desk_plots_state_ = plots_split_->saveState();
        desk_live_state_ = live_split_->saveState();
        desk_icon_size_ = toolbar_->iconSize();
        const auto* where = screen() ? screen() : QGuiApplication::primaryScreen();
        const double scale = presentation_scale(where ? where->geometry().height() : 720,
                                                QFontInfo(desk_font_).pixelSize());
        setFont(PlotLook::scaled(desk_font_, scale));
        apply_presentation_scale(scale);
        // The configuration in one line; the plots take the room of the evaluation
        // table and the log.
        config_column_->hide();
        show_config_action_->setChecked(false);
        show_config_action_->setVisible(true);
        config_summary_action_->setVisible(true);
        update_config_summary();
        plots_split_->widget(2)->hide(); // the evaluation table and the run log
        // Half the width for the code: the Chapter view's lines (54 columns) in text a
        // class reads, at 1280 px (test_layout_fit).
        const int across = std::max(live_split_->width(), 100);
        live_split_->setSizes({across / 2, across - across / 2});
        // The whole screen, also where no window manager honours full screen (a bare X server).
        if (where) setGeometry(where->geometry());
        showFullScreen();
    } else {
        setFont(desk_font_set_ ? desk_font_ : QFont());
        apply_presentation_scale(1.0);
        show_config_action_->setVisible(false);
        config_summary_action_->setVisible(false);
        config_column_->show();
        plots_split_->widget(2)->show();
        plots_split_->restoreState(desk_plots_state_);
        live_split_->restoreState(desk_live_state_);
        // The desk fonts' minimum sizes, before the desk geometry is restored.
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
        if (layout()) layout()->activate();
        if (desk_maximized_) {
            showMaximized();
        } else {
            showNormal();
            setGeometry(desk_rect_);
        }
    }
}

} // namespace studio

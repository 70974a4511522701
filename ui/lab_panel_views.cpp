// SPDX-License-Identifier: GPL-3.0-or-later
// LabPanel's views of the runs, drawn by their own classes: the charts
// (lab_charts.h) and the table (lab_table.h), fitted to the panel here.
#include "lab_panel.h"

#include <QComboBox>
#include <QHeaderView>
#include <QScrollBar>
#include <QSplitter>
#include <algorithm>

#include "lab_charts.h"
#include "lab_table.h"

namespace studio {

void LabPanel::fill_table() {
    table_->fill(queue_->results(), scale_ > 1.0);
    fit_table_height();
}

void LabPanel::draw_charts() {
    charts_->fill(shown_, {LabAxes::Value(y_axis_->currentIndex()), x_axis_->currentIndex() == 1});
}

void LabPanel::fit_table_height() {
    if (scale_ <= 1.0) return;
    // In presentation mode the table as tall as its rows (in the large font), the plots the rest.
    table_->resizeRowsToContents();
    const int height = std::max(split_->height(), 200);
    const int rows = std::max(table_->rowCount(), 3);
    const int row = table_->rowCount() > 0 ? table_->rowHeight(0) : table_->verticalHeader()->defaultSectionSize();
    const int table = table_->horizontalHeader()->sizeHint().height() + rows * row + 2 * table_->frameWidth() +
                      table_->horizontalScrollBar()->sizeHint().height();
    split_->setSizes({height - table, table});
}

} // namespace studio

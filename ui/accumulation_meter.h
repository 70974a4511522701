#pragma once
// The accumulation window as a picture: K slots filling as micro-batches run
// backward, a bar per slot with the norm of the accumulated .grad after it
// (it grows as gradients add up), and the update when the window syncs.

#include <QWidget>
#include <vector>

#include "accum/records.h"

namespace studio {

class AccumulationMeter : public QWidget {
    Q_OBJECT
public:
    explicit AccumulationMeter(QWidget* parent = nullptr);

    void reset(int accumulation_steps);
    void show_record(const accum::MicroStepRecord& record);

    int filled() const { return filled_; }
    int window_size() const { return window_size_; }
    bool synced() const { return synced_; }
    std::int64_t updates() const { return updates_; }

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override; // grows with the font (presentation mode)
    // The title and the footer wrap rather than run out of a narrow meter.
    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;

protected:
    void paintEvent(QPaintEvent* event) override;
    void changeEvent(QEvent* event) override; // a language switched live: the tooltip again

private:
    QString title() const;
    static QString footer();
    // The height `text` takes wrapped in `width` with `font`.
    int wrapped_height(const QString& text, const QFont& font, int width) const;

    int window_size_ = 1;
    int filled_ = 0;
    bool synced_ = false;
    std::int64_t updates_ = 0;
    std::vector<double> norms_; // per slot, after its backward
    double scale_ = 0.0;        // largest norm seen, for the bars
};

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later

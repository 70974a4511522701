#pragma once
// The out-of-memory banner: the engine's message and suggestion in the
// interface's language (built from the message's arguments, ui/engine_text.h),
// and a button that applies it (smaller micro-batch, more accumulation steps,
// same effective batch; with gradient checkpointing when the engine measured
// that faster). Inside a lesson the advice leads with the lever the step
// teaches, the planner's other measured lever second.

#include <QFrame>
#include <cstdint>

#include "accum/records.h"

class QLabel;
class QPushButton;

namespace studio {

enum class MemoryLever; // lesson.h

class OomBanner : public QFrame {
    Q_OBJECT
public:
    explicit OomBanner(QWidget* parent = nullptr);

    // `batch_size` × `accumulation_steps`: the configuration that ran out, for a
    // summary whose message has no out-of-memory code.
    void show_for(const accum::SummaryRecord& summary, std::int64_t batch_size, std::int64_t accumulation_steps);
    // The same inside a lesson whose step teaches `lever`: where the engine measured
    // both levers and picked the other, the step's lever comes first (and is what
    // Apply applies), the planner's pick second.
    void show_for(const accum::SummaryRecord& summary, std::int64_t batch_size, std::int64_t accumulation_steps,
                  MemoryLever lever);
    QString text() const; // what the banner says (rich text)
    QPushButton* apply_button() const { return apply_; }
    // Presentation mode: the banner's text `scale` times its desk size, and (above 1)
    // the engine's whole message only in the tooltip.
    void set_presentation_scale(double scale);
    // Every text again in the language installed now: on QEvent::LanguageChange.
    void retranslate();

Q_SIGNALS:
    void apply_requested(std::int64_t batch_size, std::int64_t accumulation_steps, bool gradient_checkpointing);

protected:
    void changeEvent(QEvent* event) override;

private:
    void render();
    QString lesson_suggestion() const; // the lesson's lever first, the planner's pick second

    QLabel* text_ = nullptr;
    QPushButton* apply_ = nullptr;
    QPushButton* dismiss_ = nullptr;
    accum::SummaryRecord summary_;
    std::int64_t failed_batch_size_ = 0;
    std::int64_t failed_accumulation_steps_ = 0;
    std::int64_t batch_size_ = 0; // the suggestion
    std::int64_t accumulation_steps_ = 0;
    bool checkpointing_ = false;
    bool lesson_first_ = false; // the suggestion is the lesson's lever, not the planner's pick
    bool compact_ = false;
};

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later

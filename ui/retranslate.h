// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The texts a widget sets, kept so that a language switched live reaches them.
// A widget adds each setter once, where it builds the widget: add() runs it at
// once and keeps it, and the widget's changeEvent runs them all again on
// QEvent::LanguageChange, when tr() answers in the new language. A setter
// computes its text each time (tr(), .arg()), so nothing is cached in a language.

#include <functional>
#include <utility>
#include <vector>

namespace studio {

class Retexts {
public:
    void add(std::function<void()> set) {
        set();
        sets_.push_back(std::move(set));
    }
    void apply() const {
        for (const auto& set : sets_) set();
    }

private:
    std::vector<std::function<void()>> sets_;
};

} // namespace studio

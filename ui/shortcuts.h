// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Help › Keyboard shortcuts…: the table is read from the window's own actions
// and buttons each time it opens, so it lists what the keys do now, in the
// language shown now, and cannot drift from them.

#include <QString>
#include <vector>

class QDialog;
class QWidget;

namespace studio {

struct ShortcutRow {
    QString keys; // as the platform writes them ("Ctrl+R")
    QString what; // the action's text without its mnemonic, or the button's name
};

// Every QAction and button under `window` that has a shortcut, in the order they
// were made; a key bound twice is listed once.
std::vector<ShortcutRow> keyboard_shortcuts(const QWidget* window);

// The dialog listing keyboard_shortcuts(window), not yet shown (its object name:
// "shortcuts_dialog", its table "shortcuts_table").
QDialog* make_shortcuts_dialog(QWidget* window);

} // namespace studio

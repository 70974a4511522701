// SPDX-License-Identifier: GPL-3.0-or-later
#include "shortcuts.h"

#include <QAbstractButton>
#include <QAction>
#include <QCoreApplication>
#include <QDialog>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QKeySequence>
#include <QLabel>
#include <QSet>
#include <QTableWidget>
#include <QVBoxLayout>

namespace studio {

namespace {

class Shortcuts {
    Q_DECLARE_TR_FUNCTIONS(studio::Shortcuts)
};

// "&Open configuration…" → "Open configuration"; "&&" stays one "&".
QString plain(QString text) {
    text.replace(QStringLiteral("&&"), QStringLiteral("\x01"));
    text.remove(QLatin1Char('&'));
    text.replace(QLatin1Char('\x01'), QLatin1Char('&'));
    if (text.endsWith(QStringLiteral("…"))) text.chop(1);
    return text.trimmed();
}

} // namespace

std::vector<ShortcutRow> keyboard_shortcuts(const QWidget* window) {
    std::vector<ShortcutRow> rows;
    QSet<QString> seen;
    const auto add = [&](const QKeySequence& keys, const QString& what) {
        const auto text = keys.toString(QKeySequence::NativeText);
        if (text.isEmpty() || what.isEmpty() || seen.contains(text)) return;
        seen.insert(text);
        rows.push_back({text, what});
    };
    for (const auto* action : window->findChildren<QAction*>()) {
        const auto what = plain(action->text());
        for (const auto& keys : action->shortcuts()) add(keys, what);
    }
    for (const auto* button : window->findChildren<QAbstractButton*>()) {
        QString what = button->accessibleName();
        if (what.isEmpty()) what = plain(button->text());
        if (what.isEmpty()) what = button->toolTip();
        add(button->shortcut(), what);
    }
    return rows;
}

QDialog* make_shortcuts_dialog(QWidget* window) {
    auto* dialog = new QDialog(window);
    dialog->setObjectName(QStringLiteral("shortcuts_dialog"));
    dialog->setWindowTitle(Shortcuts::tr("Keyboard shortcuts"));
    const auto rows = keyboard_shortcuts(window);
    auto* table = new QTableWidget(int(rows.size()), 2, dialog);
    table->setObjectName(QStringLiteral("shortcuts_table"));
    table->setHorizontalHeaderLabels({Shortcuts::tr("Keys"), Shortcuts::tr("What it does")});
    for (int i = 0; i < int(rows.size()); ++i) {
        table->setItem(i, 0, new QTableWidgetItem(rows[std::size_t(i)].keys));
        table->setItem(i, 1, new QTableWidgetItem(rows[std::size_t(i)].what));
    }
    table->verticalHeader()->setVisible(false);
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    table->horizontalHeader()->setStretchLastSection(true);
    auto* note = new QLabel(Shortcuts::tr("Read from the window's menus and buttons as they are now."));
    note->setWordWrap(true);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    QObject::connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
    auto* layout = new QVBoxLayout(dialog);
    layout->addWidget(table, 1);
    layout->addWidget(note);
    layout->addWidget(buttons);
    dialog->resize(520, 460);
    return dialog;
}

} // namespace studio

#include "language.h"

#include <QCoreApplication>
#include <QDir>
#include <QLibraryInfo>
#include <QPointer>
#include <QSettings>
#include <QTranslator>

namespace studio {

namespace {
QSettings studio_settings() { return QSettings(QStringLiteral("AccumulateStudio"), QStringLiteral("accum-studio")); }

// The translators installed now: removed before the next language's are installed.
QPointer<QTranslator> installed_studio;
QPointer<QTranslator> installed_qt;
QString installed_code = QStringLiteral("en");

void remove_installed() {
    for (auto* slot : {&installed_studio, &installed_qt}) {
        if (!*slot) continue;
        QCoreApplication::removeTranslator(*slot);
        delete slot->data();
        *slot = nullptr;
    }
}
} // namespace

std::vector<std::pair<QString, QString>> available_languages() {
    return {{QStringLiteral("en"), QStringLiteral("English")}, {QStringLiteral("vi"), QStringLiteral("Tiếng Việt")}};
}

QString configured_language() {
    const auto code = studio_settings().value(QStringLiteral("language")).toString();
    for (const auto& [known, name] : available_languages())
        if (code == known) return code;
    return QStringLiteral("en");
}

void set_configured_language(const QString& code) { studio_settings().setValue(QStringLiteral("language"), code); }

QString translations_directory() {
    // The build sets the path from the executable's directory (bin/) to the
    // installed translations (share/accum-studio/translations).
    return QDir::cleanPath(QCoreApplication::applicationDirPath() + QLatin1Char('/') +
                           QStringLiteral(ACCUM_TRANSLATIONS_RELATIVE_DIR));
}

QString current_language() { return installed_code; }

bool install_translators(QCoreApplication& app, const QString& code) {
    if (code == QLatin1String("en") || code.isEmpty()) {
        remove_installed(); // each removal sends LanguageChange: the source strings come back
        installed_code = QStringLiteral("en");
        return true;
    }
    auto* studio = new QTranslator(&app);
    if (!studio->load(QStringLiteral("accum_studio_%1").arg(code), translations_directory())) {
        delete studio;
        return false;
    }
    remove_installed();
    QCoreApplication::installTranslator(studio);
    installed_studio = studio;
    installed_code = code;
    // Qt's own strings (standard dialogs' buttons), when the system ships them.
    auto* qt = new QTranslator(&app);
    if (qt->load(QStringLiteral("qtbase_%1").arg(code), QLibraryInfo::path(QLibraryInfo::TranslationsPath))) {
        QCoreApplication::installTranslator(qt);
        installed_qt = qt;
    } else
        delete qt;
    return true;
}

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later

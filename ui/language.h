#pragma once
// The studio's languages: English (the source strings) and Vietnamese
// (resources/translations/accum_studio_vi.ts, compiled to :/i18n/*.qm).
// The choice is kept in QSettings and applied when the application starts.

#include <QString>
#include <utility>
#include <vector>

class QCoreApplication;

namespace studio {

// (code, name in that language): ("en", "English"), ("vi", "Tiếng Việt").
std::vector<std::pair<QString, QString>> available_languages();
QString configured_language(); // from QSettings; "en" when unset
void set_configured_language(const QString& code);

// Installs the studio's (and Qt's own) translators for `code` on `app`.
// Returns false when the studio's translation for a non-English code is missing.
bool install_translators(QCoreApplication& app, const QString& code);

} // namespace studio

#pragma once
// The studio's languages: English (the source strings) and Vietnamese
// (resources/translations/accum_studio_vi.ts, compiled to accum_studio_vi.qm).
// The choice is kept in QSettings; Settings › Language switches it live: the new
// translators replace the old ones and every widget gets QEvent::LanguageChange,
// which it answers by setting its texts again (retranslate.h).

#include <QString>
#include <utility>
#include <vector>

class QCoreApplication;

namespace studio {

// (code, name in that language): ("en", "English"), ("vi", "Tiếng Việt").
std::vector<std::pair<QString, QString>> available_languages();
QString configured_language(); // from QSettings; "en" when unset
void set_configured_language(const QString& code);

// Where the compiled translations are read from at run time: relative to the
// executable, <prefix>/share/accum-studio/translations for an installed studio
// (wherever the prefix is), and the same relative place in the build tree, where
// the build puts them, for the studio run from there.
QString translations_directory();

// Installs the studio's (and Qt's own) translators for `code` on `app`, in place
// of those an earlier call installed ("en": none). Returns false, and leaves the
// language as it was, when the studio's translation for a non-English code is
// missing from translations_directory().
bool install_translators(QCoreApplication& app, const QString& code);
// The language install_translators() last set: "en" before any call.
QString current_language();

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later

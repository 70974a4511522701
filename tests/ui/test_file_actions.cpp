// SPDX-License-Identifier: GPL-3.0-or-later
// The File menu's actions alone (file_actions.h), on a fake window and a fake
// file dialog: no modal dialog, no widget. A good file is applied; a bad one
// changes nothing and its warning names the file and the problem; a cancelled
// dialog does nothing; exports write both files.

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <QTextStream>
#include <vector>

#include "file_actions.h"

namespace {

class FakeWindow : public studio::FileSurface {
public:
    accum::RunConfig form;
    int form_sets = 0;
    std::vector<std::shared_ptr<const studio::Lesson>> lessons;
    bool images_written = true;
    QStringList images;
    std::vector<std::pair<QString, QString>> warnings;
    QStringList messages;

    accum::RunConfig form_config() const override { return form; }
    void set_form_config(const accum::RunConfig& c) override {
        form = c;
        ++form_sets;
    }
    void start_lesson_file(std::shared_ptr<const studio::Lesson> lesson) override { lessons.push_back(lesson); }
    bool write_plot_image(bool loss, const QString& path) const override {
        const_cast<FakeWindow*>(this)->images << (loss ? QStringLiteral("loss ") : QStringLiteral("memory ")) + path;
        return images_written;
    }
    void write_plot_csv(bool loss, QTextStream& out) const override {
        out << (loss ? "step,loss\n1,0.5\n" : "t,bytes\n0.1,1024\n");
    }
    void show_warning(const QString& title, const QString& text) override { warnings.emplace_back(title, text); }
    void show_message(const QString& text, int) override { messages << text; }
};

// Answers each dialog with the next of `answers` ("" = cancelled) and keeps the questions.
struct FakeDialog {
    QStringList answers;
    std::vector<studio::FileDialogRequest> asked;
    studio::FileDialog function() {
        return [this](const studio::FileDialogRequest& r) {
            asked.push_back(r);
            return answers.isEmpty() ? QString() : answers.takeFirst();
        };
    }
};

QString write_file(const QString& path, const QByteArray& text) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return {};
    f.write(text);
    return path;
}

} // namespace

class TestFileActions : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void savedConfigurationOpensAgain();
    void badConfigurationChangesNothing();
    void cancelledDialogDoesNothing();
    void unwritableFileIsNamed();
    void lessonFiles();
    void exportsWriteBothFiles();

private:
    QTemporaryDir dir_;
};

void TestFileActions::savedConfigurationOpensAgain() {
    FakeWindow window;
    window.form.batch_size = 32;
    window.form.accumulation_steps = 4;
    window.form.output_dir = "my-runs";
    FakeDialog dialog;
    studio::FileActions files(window, dialog.function());
    const auto path = dir_.filePath(QStringLiteral("config.json"));
    dialog.answers = {path};
    files.save_config_dialog();
    QCOMPARE(int(dialog.asked.size()), 1);
    QVERIFY(dialog.asked[0].save);
    QCOMPARE(dialog.asked[0].start, QStringLiteral("config.json"));
    QVERIFY(window.warnings.empty());
    QFile saved(path);
    QVERIFY(saved.open(QIODevice::ReadOnly));
    // The folder runs are saved in is the studio's setting, not the experiment's.
    QVERIFY(!saved.readAll().contains("my-runs"));

    window.form = accum::RunConfig{};
    dialog.answers = {path};
    files.load_config_dialog();
    QVERIFY(!dialog.asked[1].save);
    QVERIFY(window.warnings.empty());
    QCOMPARE(window.form_sets, 1);
    QCOMPARE(window.form.batch_size, 32);
    QCOMPARE(window.form.accumulation_steps, 4);
}

void TestFileActions::badConfigurationChangesNothing() {
    FakeWindow window;
    window.form.batch_size = 16;
    FakeDialog dialog;
    studio::FileActions files(window, dialog.function());
    const auto bad = write_file(dir_.filePath(QStringLiteral("bad.json")), R"({"batch-sise": 4})");
    QVERIFY(!bad.isEmpty());
    QString error;
    QVERIFY(!files.load_config(bad, &error));
    QVERIFY2(error.contains(QStringLiteral("batch-sise")), qPrintable(error));
    QCOMPARE(window.form_sets, 0);

    // Through the menu: the warning names the file and keeps the reason.
    dialog.answers = {bad};
    files.load_config_dialog();
    QCOMPARE(int(window.warnings.size()), 1);
    QCOMPARE(window.warnings[0].first, QStringLiteral("Open configuration"));
    QVERIFY2(window.warnings[0].second.contains(bad), qPrintable(window.warnings[0].second));
    QVERIFY(window.warnings[0].second.contains(QStringLiteral("batch-sise")));
    QCOMPARE(window.form_sets, 0);
    QCOMPARE(window.form.batch_size, 16);

    const auto missing = dir_.filePath(QStringLiteral("none.json"));
    dialog.answers = {missing};
    files.load_config_dialog();
    QCOMPARE(int(window.warnings.size()), 2);
    QVERIFY(window.warnings[1].second.contains(missing));
    QVERIFY(window.warnings[1].second.size() > missing.size() + 2); // the system's reason too
    QCOMPARE(window.form_sets, 0);
}

void TestFileActions::cancelledDialogDoesNothing() {
    FakeWindow window;
    FakeDialog dialog; // every answer empty
    studio::FileActions files(window, dialog.function());
    files.load_config_dialog();
    files.save_config_dialog();
    files.open_lesson_dialog();
    files.export_plot_dialog(true);
    files.export_csv_dialog();
    QCOMPARE(int(dialog.asked.size()), 5);
    QVERIFY(window.warnings.empty());
    QVERIFY(window.messages.isEmpty());
    QVERIFY(window.images.isEmpty());
    QCOMPARE(window.form_sets, 0);
    QVERIFY(window.lessons.empty());
}

void TestFileActions::unwritableFileIsNamed() {
    FakeWindow window;
    FakeDialog dialog;
    studio::FileActions files(window, dialog.function());
    const auto nowhere = dir_.filePath(QStringLiteral("no-such-folder/config.json"));
    dialog.answers = {nowhere};
    files.save_config_dialog();
    QCOMPARE(int(window.warnings.size()), 1);
    QCOMPARE(window.warnings[0].first, QStringLiteral("Save configuration"));
    QVERIFY(window.warnings[0].second.contains(nowhere));

    window.images_written = false;
    const auto image = dir_.filePath(QStringLiteral("loss.png"));
    dialog.answers = {image};
    files.export_plot_dialog(true);
    QCOMPARE(window.images, QStringList{QStringLiteral("loss ") + image});
    QCOMPARE(int(window.warnings.size()), 2);
    QCOMPARE(window.warnings[1].second, QStringLiteral("Could not write %1").arg(image));

    dialog.answers = {nowhere};
    files.export_csv_dialog();
    QCOMPARE(int(window.warnings.size()), 3);
    QVERIFY(window.warnings[2].second.contains(nowhere));
    QVERIFY(window.messages.isEmpty());
}

void TestFileActions::lessonFiles() {
    FakeWindow window;
    FakeDialog dialog;
    studio::FileActions files(window, dialog.function());
    const auto good = QStringLiteral(ACCUM_SOURCE_DIR "/resources/lessons/gradient-accumulation.json");
    dialog.answers = {good};
    files.open_lesson_dialog();
    QCOMPARE(dialog.asked[0].filter, QStringLiteral("Lesson (*.json)"));
    QCOMPARE(dialog.asked[0].start, studio::lessons_directory(QCoreApplication::applicationDirPath()));
    QVERIFY(window.warnings.empty());
    QCOMPARE(int(window.lessons.size()), 1);
    QVERIFY(!window.lessons[0]->steps.empty());

    // A damaged lesson starts nothing; the warning names the file and its line.
    const auto bad = write_file(dir_.filePath(QStringLiteral("damaged.json")), "{\n  \"title\": \n");
    dialog.answers = {bad};
    files.open_lesson_dialog();
    QCOMPARE(int(window.lessons.size()), 1);
    QCOMPARE(int(window.warnings.size()), 1);
    QCOMPARE(window.warnings[0].first, QStringLiteral("Open lesson"));
    QVERIFY2(window.warnings[0].second.contains(QStringLiteral("damaged.json")), qPrintable(window.warnings[0].second));
    QVERIFY(window.warnings[0].second.contains(QStringLiteral("line")));
}

void TestFileActions::exportsWriteBothFiles() {
    FakeWindow window;
    FakeDialog dialog;
    studio::FileActions files(window, dialog.function());
    const auto loss = dir_.filePath(QStringLiteral("out.csv"));
    const auto memory = dir_.filePath(QStringLiteral("out-memory.csv"));
    dialog.answers = {loss};
    files.export_csv_dialog();
    QVERIFY(window.warnings.empty());
    QCOMPARE(window.messages, QStringList{QStringLiteral("Wrote %1 and %2").arg(loss, memory)});
    QFile l(loss), m(memory);
    QVERIFY(l.open(QIODevice::ReadOnly));
    QVERIFY(m.open(QIODevice::ReadOnly));
    QCOMPARE(l.readAll(), QByteArray("step,loss\n1,0.5\n"));
    QCOMPARE(m.readAll(), QByteArray("t,bytes\n0.1,1024\n"));

    // The memory file cannot be written (a folder holds its name): the loss
    // file already there is kept as it was, and the warning names the other.
    const auto kept = write_file(dir_.filePath(QStringLiteral("kept.csv")), "an earlier export\n");
    QVERIFY(QDir(dir_.path()).mkdir(QStringLiteral("kept-memory.csv")));
    dialog.answers = {kept};
    files.export_csv_dialog();
    QCOMPARE(int(window.warnings.size()), 1);
    QVERIFY2(window.warnings[0].second.contains(QStringLiteral("kept-memory.csv")), qPrintable(window.warnings[0].second));
    QFile k(kept);
    QVERIFY(k.open(QIODevice::ReadOnly));
    QCOMPARE(k.readAll(), QByteArray("an earlier export\n"));
    window.warnings.clear();

    const auto image = dir_.filePath(QStringLiteral("memory.pdf"));
    dialog.answers = {image};
    files.export_plot_dialog(false);
    QCOMPARE(dialog.asked.back().start, QStringLiteral("memory.png"));
    QCOMPARE(window.images, QStringList{QStringLiteral("memory ") + image});
    QVERIFY(window.warnings.empty());
}

QTEST_GUILESS_MAIN(TestFileActions)
#include "test_file_actions.moc"

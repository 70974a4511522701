// The IDX and CSV readers: the real Fashion-MNIST files, and broken copies.
#include <QtTest/QtTest>

#include <fstream>

#include <zlib.h>

#include "accum/errors.h"
#include "accum/metrics_io.h"
#include "data/csv_reader.h"
#include "data/idx_reader.h"

using namespace accum;

namespace {

std::string fmnist(const char* name) { return std::string(ACCUM_FASHION_MNIST_DIR) + "/" + name; }

std::vector<char> read_all(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_all(const std::string& path, const std::vector<char>& bytes) {
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void write_gz(const std::string& path, const std::vector<std::uint8_t>& bytes) {
    gzFile f = gzopen(path.c_str(), "wb");
    gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
    gzclose(f);
}

// Runs `f`, expects a DataError whose message contains every fragment.
template <typename F>
void expect_data_error(F f, std::initializer_list<const char*> fragments) {
    try {
        f();
        QFAIL("expected a DataError");
    } catch (const DataError& e) {
        const std::string what = e.what();
        for (const char* frag : fragments)
            QVERIFY2(what.find(frag) != std::string::npos, (what + "  [missing: " + frag + "]").c_str());
    }
}

} // namespace

class TestReaders : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void realFashionMnist() {
        if (!QFile::exists(QString::fromStdString(fmnist("train-images-idx3-ubyte.gz"))))
            QSKIP("dataset-fashion-mnist is not installed");
        const auto images = read_idx_file(fmnist("train-images-idx3-ubyte.gz"));
        QCOMPARE(images.dims, (std::vector<std::int64_t>{60000, 28, 28}));
        QCOMPARE(images.data.size(), std::size_t(60000 * 28 * 28));
        const auto labels = read_idx_file(fmnist("train-labels-idx1-ubyte.gz"));
        QCOMPARE(labels.dims, (std::vector<std::int64_t>{60000}));
        // Fashion-MNIST's training set is balanced: 6000 images per class.
        std::vector<int> counts(10, 0);
        for (auto l : labels.data) {
            QVERIFY(l < 10);
            ++counts[l];
        }
        for (int c : counts) QCOMPARE(c, 6000);
        QCOMPARE(read_idx_file(fmnist("t10k-images-idx3-ubyte.gz")).dims[0], std::int64_t(10000));
        QCOMPARE(read_idx_file(fmnist("t10k-labels-idx1-ubyte.gz")).dims[0], std::int64_t(10000));
    }

    void truncatedGzip() {
        if (!QFile::exists(QString::fromStdString(fmnist("train-labels-idx1-ubyte.gz")))) QSKIP("no dataset");
        QTemporaryDir dir;
        auto bytes = read_all(fmnist("train-labels-idx1-ubyte.gz"));
        bytes.resize(bytes.size() / 2);
        const std::string path = dir.filePath("labels.gz").toStdString();
        write_all(path, bytes);
        expect_data_error([&] { read_idx_file(path); }, {"labels.gz", "truncated"});
    }

    void corruptGzip() {
        QTemporaryDir dir;
        std::vector<char> bytes{'\x1f', '\x8b', 8, 0, 0, 0, 0, 0, 0, 3, 'g', 'a', 'r', 'b', 'a', 'g', 'e', '!', '!'};
        const std::string path = dir.filePath("bad.gz").toStdString();
        write_all(path, bytes);
        expect_data_error([&] { read_idx_file(path); }, {"bad.gz"});
    }

    void missingFile() {
        expect_data_error([] { read_idx_file("/nonexistent/train-images-idx3-ubyte.gz"); }, {"cannot open", "/nonexistent"});
    }

    void idxHeaderChecks() {
        const std::vector<std::uint8_t> wrong_magic{1, 2, 8, 1, 0, 0, 0, 1, 7};
        expect_data_error([&] { parse_idx(wrong_magic.data(), wrong_magic.size(), "m"); }, {"magic"});
        const std::vector<std::uint8_t> wrong_type{0, 0, 0x0d, 1, 0, 0, 0, 1, 7, 7, 7, 7};
        expect_data_error([&] { parse_idx(wrong_type.data(), wrong_type.size(), "t"); }, {"element type"});
        const std::vector<std::uint8_t> short_data{0, 0, 8, 1, 0, 0, 0, 5, 1, 2};
        expect_data_error([&] { parse_idx(short_data.data(), short_data.size(), "s"); }, {"truncated IDX data", "2 of 5"});
        const std::vector<std::uint8_t> extra{0, 0, 8, 1, 0, 0, 0, 1, 1, 2};
        expect_data_error([&] { parse_idx(extra.data(), extra.size(), "x"); }, {"unexpected bytes"});
        const std::vector<std::uint8_t> tiny{0, 0};
        expect_data_error([&] { parse_idx(tiny.data(), tiny.size(), "tiny"); }, {"too short"});
        const std::vector<std::uint8_t> ok{0, 0, 8, 2, 0, 0, 0, 2, 0, 0, 0, 3, 1, 2, 3, 4, 5, 6};
        const auto a = parse_idx(ok.data(), ok.size(), "ok");
        QCOMPARE(a.dims, (std::vector<std::int64_t>{2, 3}));
        QCOMPARE(int(a.data[5]), 6);
    }

    void plainAndGzipAgree() {
        QTemporaryDir dir;
        const std::vector<std::uint8_t> ok{0, 0, 8, 1, 0, 0, 0, 3, 9, 8, 7};
        const std::string gz = dir.filePath("a.idx.gz").toStdString();
        write_gz(gz, ok);
        QCOMPARE(read_idx_file(gz).data, (std::vector<std::uint8_t>{9, 8, 7}));
    }

    void csvGood() {
        const auto t = parse_csv("x,y,label\n1,2,cat\n3.5,-4e1,dog\n\n5,6,cat\n", "label", "f.csv");
        QCOMPARE(t.rows, std::int64_t(3));
        QCOMPARE(t.feature_names, (std::vector<std::string>{"x", "y"}));
        QCOMPARE(t.features[3], -40.0f);
        QCOMPARE(t.class_names, (std::vector<std::string>{"cat", "dog"}));
        QCOMPARE(t.labels, (std::vector<std::int64_t>{0, 1, 0}));
        const auto n = parse_csv("label,a\n3,1\n1,2\n3,0\n", "label", "n.csv");
        QCOMPARE(n.labels, (std::vector<std::int64_t>{1, 0, 1})); // numeric labels keep their order
        const auto q = parse_csv("\"a\",\"label\"\n\"1.5\",\"x,y\"\n", "label", "q.csv");
        QCOMPARE(q.class_names.front(), std::string("x,y"));
    }

    void csvErrors_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("label");
        QTest::addColumn<QString>("fragment");
        QTest::newRow("empty") << "" << "label" << "empty file";
        QTest::newRow("header only") << "a,label\n" << "label" << "header only";
        QTest::newRow("unknown label") << "a,b\n1,2\n" << "label" << "no label column 'label'";
        QTest::newRow("missing field") << "a,b,label\n1,2,0\n3,0\n" << "label" << "f.csv:3: expected 3 fields, found 2";
        QTest::newRow("extra field") << "a,label\n1,0,9\n" << "label" << "f.csv:2: expected 2 fields";
        QTest::newRow("non numeric") << "a,label\n1,0\nabc,1\n" << "label" << "f.csv:3: column 'a' value 'abc' is not a number";
        QTest::newRow("nan") << "a,label\nnan,0\n" << "label" << "f.csv:2: column 'a' value 'nan'";
        QTest::newRow("inf") << "a,label\ninf,0\n" << "label" << "f.csv:2";
        QTest::newRow("float overflow") << "x,label\n3.e45,0\n" << "label" << "f.csv:2: column 'x' value '3.e45' is out of range"; // found by fuzz_csv
        QTest::newRow("empty label") << "a,label\n1,\n" << "label" << "f.csv:2: empty label";
        QTest::newRow("only label") << "label\n1\n" << "label" << "at least one feature";
    }
    void csvErrors() {
        QFETCH(QString, text);
        QFETCH(QString, label);
        QFETCH(QString, fragment);
        const std::string t = text.toStdString(), l = label.toStdString(), frag = fragment.toStdString();
        expect_data_error([&] { parse_csv(t, l, "f.csv"); }, {frag.c_str()});
    }

    // Whole-number fields of a metrics line: a float is read only when it is whole
    // and fits in 64 bits (the fuzzer found 7.7e22 converted with undefined behaviour).
    void metricsWholeNumbers_data() {
        QTest::addColumn<QString>("value");
        QTest::addColumn<bool>("accepted");
        QTest::addColumn<qint64>("expected");
        QTest::newRow("integer") << "77" << true << qint64(77);
        QTest::newRow("whole float") << "12.0" << true << qint64(12);
        QTest::newRow("largest") << "9223372036854775807" << true << std::numeric_limits<qint64>::max();
        QTest::newRow("negative") << "-5" << true << qint64(-5);
        QTest::newRow("fraction") << "1.5" << false << qint64(0);
        QTest::newRow("huge float") << "7.7e22" << false << qint64(0);
        QTest::newRow("past int64") << "18446744073709551615" << false << qint64(0);
    }
    void metricsWholeNumbers() {
        QFETCH(QString, value);
        QFETCH(bool, accepted);
        QFETCH(qint64, expected);
        const auto line = R"({"type":"step","step":1,"micro_step":4,"loss":1.2,"samples_seen":256,"memory_bytes":)" +
                          value.toStdString() + "}";
        std::string error;
        const auto record = accum::parse_json_line(line, error);
        QCOMPARE(record.has_value(), accepted);
        if (accepted) {
            QCOMPARE(qint64(std::get<accum::StepRecord>(*record).memory_bytes), expected);
        } else {
            QVERIFY2(error.find("'memory_bytes' is not a whole number") != std::string::npos, error.c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestReaders)
#include "test_readers.moc"
// SPDX-License-Identifier: GPL-3.0-or-later

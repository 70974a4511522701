// SPDX-License-Identifier: GPL-3.0-or-later
// --data FILE.safetensors: the same tensors as a torch.save file give the same
// splits, batches (shuffled, sharded across ranks) and step losses; damaged
// files are refused naming the file, the tensor and the problem; and a run's
// anonymous memory does not grow with the file (docs/own-model.md "The data
// file", the bound checked in anonymousMemoryBounded).
#include <QElapsedTimer>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <signal.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>
#include <torch/serialize.h>

#include "accum/errors.h"
#include "accum/metrics_io.h"
#include "data/data_loader.h"
#include "data/safetensors_reader.h"
#include "data/tensor_file.h"

#include "capture.h"
#include "metrics_file.h"
#include "processes.h"

using namespace accum;
using nlohmann::json;

namespace {

const char* st_dtype(torch::ScalarType t) {
    switch (t) {
    case torch::kInt64: return "I64";
    case torch::kInt32: return "I32";
    case torch::kUInt8: return "U8";
    case torch::kFloat32: return "F32";
    default: return "?";
    }
}

// A safetensors file as the Python library writes it: the header padded with
// spaces to a multiple of 8 bytes, the tensors' bytes one after the other.
struct Parts {
    json header = json::object();
    std::string data;
};

Parts parts_of(const std::vector<std::pair<std::string, torch::Tensor>>& tensors) {
    Parts p;
    for (const auto& [name, tensor] : tensors) {
        const auto t = tensor.contiguous();
        const auto begin = p.data.size();
        p.data.append(static_cast<const char*>(t.data_ptr()), static_cast<std::size_t>(t.nbytes()));
        p.header[name] = {{"dtype", st_dtype(t.scalar_type())}, {"shape", t.sizes().vec()},
                          {"data_offsets", {begin, p.data.size()}}};
    }
    p.header["__metadata__"] = {{"format", "pt"}};
    return p;
}

void write_raw(const std::string& path, std::string header_text, const std::string& data,
               std::optional<std::uint64_t> header_size = std::nullopt) {
    while (header_text.size() % 8) header_text += ' ';
    const std::uint64_t n = header_size.value_or(header_text.size());
    std::ofstream out(path, std::ios::binary);
    for (int i = 0; i < 8; ++i) out.put(static_cast<char>((n >> (8 * i)) & 0xff));
    out << header_text << data;
}

void write_parts(const std::string& path, const Parts& p) { write_raw(path, p.header.dump(), p.data); }

void write_pt(const std::string& path, const std::vector<std::pair<std::string, torch::Tensor>>& tensors) {
    c10::impl::GenericDict dict(c10::StringType::get(), c10::AnyType::get());
    for (const auto& [name, tensor] : tensors) dict.insert(name, tensor);
    const auto bytes = torch::pickle_save(dict);
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Language-model data: token ids [N, T] with padding, labels [N, T] the next
// token (-100 on padding), a validation split: the splits' every key.
struct LmData {
    torch::Tensor ids, mask, labels, eval_ids, eval_mask, eval_labels;
};

LmData lm_data(std::int64_t n, std::int64_t t) {
    torch::manual_seed(11);
    auto make = [&](std::int64_t count, torch::Tensor& ids, torch::Tensor& mask, torch::Tensor& labels) {
        ids = torch::randint(1, 50, {count, t}, torch::kInt64);
        const auto lengths = torch::randint(t / 2, t + 1, {count, 1}, torch::kInt64);
        mask = torch::arange(t).unsqueeze(0).lt(lengths).to(torch::kInt64);
        ids = ids * mask;
        labels = torch::cat({ids.slice(1, 1), torch::zeros({count, 1}, torch::kInt64)}, 1);
        labels = torch::where(torch::cat({mask.slice(1, 1), torch::zeros({count, 1}, torch::kInt64)}, 1).eq(1), labels,
                              torch::full_like(labels, -100));
    };
    LmData d;
    make(n, d.ids, d.mask, d.labels);
    make(n / 4, d.eval_ids, d.eval_mask, d.eval_labels);
    return d;
}

// The .pt file flat and int64, as a tokenizer's output is saved; the
// safetensors file nested with dots and in the narrow dtypes a conversion
// script writes (int32 ids and labels, uint8 mask): gather() makes both int64.
void write_both(const std::string& pt, const std::string& st, const LmData& d) {
    write_pt(pt, {{"input_ids", d.ids}, {"attention_mask", d.mask}, {"labels", d.labels},
                  {"eval_input_ids", d.eval_ids}, {"eval_attention_mask", d.eval_mask}, {"eval_labels", d.eval_labels}});
    write_parts(st, parts_of({{"train.input_ids", d.ids.to(torch::kInt32)},
                              {"train.attention_mask", d.mask.to(torch::kUInt8)},
                              {"train.labels", d.labels.to(torch::kInt32)},
                              {"validation.input_ids", d.eval_ids.to(torch::kInt32)},
                              {"validation.attention_mask", d.eval_mask.to(torch::kUInt8)},
                              {"validation.labels", d.eval_labels.to(torch::kInt32)}}));
}

void same_batch(const Batch& a, const Batch& b) {
    QVERIFY(b.input_ids.scalar_type() == torch::kInt64);
    QVERIFY(b.attention_mask.scalar_type() == torch::kInt64);
    QVERIFY(b.labels.scalar_type() == torch::kInt64);
    QCOMPARE(a.samples, b.samples);
    QCOMPARE(a.num_items, b.num_items);
    QVERIFY(torch::equal(a.input_ids, b.input_ids));
    QVERIFY(torch::equal(a.attention_mask, b.attention_mask));
    QVERIFY(torch::equal(a.labels, b.labels));
}

std::string refusal(const std::string& path) {
    try {
        load_tensor_file(path);
    } catch (const DataError& e) {
        return e.what();
    }
    return "(loaded without an error)";
}

QStringList lm_run(const QString& data, const QString& out) {
    return {"--dataset", "tensors", "--data", data, "--model", "transformer", "--batch-size", "8",
            "--accumulation-steps", "2", "--max-steps", "4", "--lr", "0.001", "--eval-strategy", "no",
            "--save-strategy", "no", "--threads", "1", "--quiet", "--output-dir", out};
}

// A run's peak RssAnon and RssFile (bytes), read from /proc/PID/status every
// 20 ms of its life.
struct Watched {
    testing::CliResult result;
    std::int64_t peak_anon = 0, peak_file = 0;
};

std::int64_t status_kib(pid_t pid, const std::string& field) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1));
    return 0;
}

Watched watch_run(const QStringList& args, int timeout_ms) {
    Watched w;
    QProcess p;
    p.start(ACCUM_RUN_EXE, args);
    if (!p.waitForStarted(30000)) return w;
    const auto pid = static_cast<pid_t>(p.processId());
    QElapsedTimer clock;
    clock.start();
    while (!p.waitForFinished(20)) {
        w.peak_anon = std::max(w.peak_anon, status_kib(pid, "RssAnon") * 1024);
        w.peak_file = std::max(w.peak_file, status_kib(pid, "RssFile") * 1024);
        if (clock.elapsed() > timeout_ms) break;
    }
    w.result = testing::finish(p, 1000);
    return w;
}

// Sequence classification over `n` samples of 64 int32 token ids (vocabulary
// 1,000, every id in the first 1,000 samples), a uint8 attention mask (the
// built-in MLP needs one) and int64 labels 0/1, written by chunks: the test
// never holds the file in memory.
void write_token_file(const std::string& path, std::int64_t n) {
    constexpr std::int64_t t = 64;
    const std::int64_t ids_end = n * t * 4, mask_end = ids_end + n * t;
    json header = {{"input_ids", {{"dtype", "I32"}, {"shape", {n, t}}, {"data_offsets", {0, ids_end}}}},
                   {"attention_mask", {{"dtype", "U8"}, {"shape", {n, t}}, {"data_offsets", {ids_end, mask_end}}}},
                   {"labels", {{"dtype", "I64"}, {"shape", {n}}, {"data_offsets", {mask_end, mask_end + n * 8}}}}};
    std::string text = header.dump();
    while (text.size() % 8) text += ' ';
    std::ofstream out(path, std::ios::binary);
    const std::uint64_t size = text.size();
    for (int i = 0; i < 8; ++i) out.put(static_cast<char>((size >> (8 * i)) & 0xff));
    out << text;
    constexpr std::int64_t rows = 16384;
    std::vector<std::int32_t> ids(static_cast<std::size_t>(rows * t));
    for (std::int64_t first = 0; first < n; first += rows) {
        const auto count = std::min(rows, n - first);
        for (std::int64_t i = 0; i < count; ++i)
            for (std::int64_t j = 0; j < t; ++j)
                ids[static_cast<std::size_t>(i * t + j)] = static_cast<std::int32_t>(((first + i) * 131 + j * 17) % 1000);
        out.write(reinterpret_cast<const char*>(ids.data()), static_cast<std::streamsize>(count * t * 4));
    }
    std::vector<std::uint8_t> mask(static_cast<std::size_t>(rows * t));
    for (std::int64_t first = 0; first < n; first += rows) {
        const auto count = std::min(rows, n - first);
        for (std::int64_t i = 0; i < count; ++i)
            for (std::int64_t j = 0; j < t; ++j) mask[static_cast<std::size_t>(i * t + j)] = j < 32 + (first + i) % 33;
        out.write(reinterpret_cast<const char*>(mask.data()), static_cast<std::streamsize>(count * t));
    }
    std::vector<std::int64_t> labels(static_cast<std::size_t>(rows));
    for (std::int64_t first = 0; first < n; first += rows) {
        const auto count = std::min(rows, n - first);
        for (std::int64_t i = 0; i < count; ++i) labels[static_cast<std::size_t>(i)] = ((first + i) * 131 / 7) % 2;
        out.write(reinterpret_cast<const char*>(labels.data()), static_cast<std::streamsize>(count * 8));
    }
}

} // namespace

class TestSafetensorsData : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // The two files give the same splits and, shuffled, the same batches in
    // every epoch, whole and as each of 2 ranks' shards; the mapped tensors
    // keep the file's dtypes (nothing converted whole).
    void sameBatchesAsPt() {
        QTemporaryDir dir;
        const auto pt = dir.filePath("data.pt").toStdString(), st = dir.filePath("data.safetensors").toStdString();
        write_both(pt, st, lm_data(200, 16));
        auto a = load_tensor_file(pt);
        auto b = load_tensor_file(st);
        QVERIFY(a.train.task == Task::LanguageModeling && b.train.task == Task::LanguageModeling);
        QVERIFY(b.train.inputs.scalar_type() == torch::kInt32);
        QVERIFY(b.train.attention_mask.scalar_type() == torch::kUInt8);
        QCOMPARE(b.train.size(), std::int64_t(200));
        QCOMPARE(b.eval.size(), std::int64_t(50));
        QCOMPARE(b.train.vocab_size, a.train.vocab_size);
        QCOMPARE(b.train.num_classes, a.train.num_classes);
        QCOMPARE(b.train.items_per_sample, a.train.items_per_sample);
        QCOMPARE(b.eval.items_per_sample, a.eval.items_per_sample);
        for (int world : {1, 2})
            for (int rank = 0; rank < world; ++rank) {
                DataLoader la(a.train, 16, /*shuffle=*/true, 7), lb(b.train, 16, true, 7);
                la.shard(rank, world);
                lb.shard(rank, world);
                for (std::int64_t epoch : {0, 1}) {
                    la.set_epoch(epoch);
                    lb.set_epoch(epoch);
                    QCOMPARE(lb.size(), la.size());
                    for (std::int64_t i = 0; i < la.size() && !QTest::currentTestFailed(); ++i)
                        same_batch(la.batch(i), lb.batch(i));
                    QCOMPARE(lb.items_in(0, lb.size()), la.items_in(0, la.size()));
                }
            }
        DataLoader ea(a.eval, 16, false, 7), eb(b.eval, 16, false, 7);
        for (std::int64_t i = 0; i < ea.size() && !QTest::currentTestFailed(); ++i) same_batch(ea.batch(i), eb.batch(i));
    }

    // Flat names in a safetensors file follow the torch.save file's rules
    // (eval_ for the eval split, "inputs" and "label" for their synonyms), and a
    // file is recognised by its header whatever its name.
    void flatNamesAndSniffing() {
        QTemporaryDir dir;
        const auto path = dir.filePath("features.bin").toStdString();
        torch::manual_seed(3);
        write_parts(path, parts_of({{"inputs", torch::randn({40, 6})},
                                    {"label", torch::randint(0, 3, {40}, torch::kInt64)},
                                    {"eval_inputs", torch::randn({10, 6})},
                                    {"eval_label", torch::randint(0, 3, {10}, torch::kInt64)}}));
        QVERIFY(is_safetensors_file(path));
        const auto s = load_tensor_file(path);
        QVERIFY(s.train.task == Task::TabularClassification);
        QCOMPARE(s.train.num_features, std::int64_t(6));
        QCOMPARE(s.eval.size(), std::int64_t(10));
        const auto pt = dir.filePath("x.pt").toStdString();
        write_pt(pt, {{"inputs", torch::randn({4, 6})}, {"labels", torch::zeros({4}, torch::kInt64)}});
        QVERIFY(!is_safetensors_file(pt));
    }

    // accum-run on either file: both runs complete, no loss is NaN, the losses
    // are the same step for step (exactly: the same batches in the same order
    // on one thread), in one process and as 2 ranks.
    void sameLossesAsPt() {
        QTemporaryDir dir;
        const auto pt = dir.filePath("data.pt"), st = dir.filePath("data.safetensors");
        write_both(pt.toStdString(), st.toStdString(), lm_data(256, 16));
        for (const QStringList& extra : {QStringList{}, QStringList{"--nproc-per-node", "2", "--master-port", "0"}}) {
            const auto out_a = dir.filePath("a" + QString::number(extra.size())),
                       out_b = dir.filePath("b" + QString::number(extra.size()));
            const auto ra = testing::run_cli(lm_run(pt, out_a) + extra, 180000);
            QVERIFY2(ra.exit_code == 0, qPrintable(ra.err));
            const auto rb = testing::run_cli(lm_run(st, out_b) + extra, 180000);
            QVERIFY2(rb.exit_code == 0, qPrintable(rb.err));
            const auto sa = testing::records_of<StepRecord>(testing::read_records(out_a + "/metrics.jsonl"));
            const auto sb = testing::records_of<StepRecord>(testing::read_records(out_b + "/metrics.jsonl"));
            QCOMPARE(sa.size(), std::size_t(4));
            const auto c = testing::compare_losses(sa, sb);
            QVERIFY2(c.within(0.0), c.what().c_str());
        }
    }

    // Each damage refused with a DataError naming the file, the tensor where
    // there is one, and the problem.
    void damagedFilesRefused_data() {
        QTest::addColumn<QString>("damage");
        QTest::addColumn<QString>("expected");
        QTest::newRow("too short") << "short" << "is 5 bytes long; a safetensors file begins with an 8-byte header size";
        QTest::newRow("header past end") << "header size" << "its header size (1000000 bytes) runs past the end";
        QTest::newRow("not JSON") << "json" << "its header is not JSON (";
        QTest::newRow("not an object") << "array" << "its header is a JSON array, not an object of named tensors";
        QTest::newRow("offsets outside") << "offsets" << "tensor 'train.labels' has data_offsets";
        QTest::newRow("dtype unusable") << "dtype" << "tensor 'train.labels' has dtype U16, which the engine cannot use";
        QTest::newRow("shape against offsets") << "shape" << "tensor 'train.labels' has shape [33] of I64 (264 bytes) "
                                                              "but data_offsets";
        QTest::newRow("negative size") << "negative" << "tensor 'train.labels' has shape [-1]";
        QTest::newRow("no split") << "split" << "tensor 'model.weight': 'model' is no split this reader knows";
        QTest::newRow("float labels") << "float labels" << "'train.labels' is float32; labels are class or token ids";
    }
    void damagedFilesRefused() {
        QFETCH(QString, damage);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        const auto path = dir.filePath("bad.safetensors").toStdString();
        torch::manual_seed(5);
        auto p = parts_of({{"train.input_ids", torch::randint(0, 9, {32, 4}, torch::kInt64)},
                           {"train.labels", torch::randint(0, 2, {32}, torch::kInt64)}});
        auto& labels = p.header["train.labels"];
        if (damage == "short") {
            std::ofstream(path, std::ios::binary).write("\x08\0\0\0\0", 5);
        } else if (damage == "header size") {
            write_raw(path, p.header.dump(), p.data, 1000000);
        } else if (damage == "json") {
            write_raw(path, "{\"train.input_ids\": {\"dtype\": ", p.data);
        } else if (damage == "array") {
            write_raw(path, "[1, 2]", p.data);
        } else {
            if (damage == "offsets") labels["data_offsets"][1] = p.data.size() + 8;
            if (damage == "dtype") labels["dtype"] = "U16";
            if (damage == "shape") labels["shape"] = json::array({33});
            if (damage == "negative") labels["shape"] = json::array({-1});
            if (damage == "split") p.header["model.weight"] = labels;
            if (damage == "float labels") { // 256 bytes either way
                labels["dtype"] = "F32";
                labels["shape"] = json::array({64});
            }
            write_parts(path, p);
        }
        const auto message = refusal(path);
        const auto want = expected.toStdString();
        QVERIFY2(message.find(path + ": ") == 0, message.c_str());
        QVERIFY2(message.find(want) != std::string::npos, (message + "\nexpected: " + want).c_str());
    }

    // The runner's side: exit 4 (data), the message on stderr.
    void damagedFileExitsFour() {
        QTemporaryDir dir;
        const auto path = dir.filePath("bad.safetensors");
        auto p = parts_of({{"train.input_ids", torch::zeros({8, 4}, torch::kInt64)},
                           {"train.labels", torch::zeros({8}, torch::kInt64)}});
        p.header["train.labels"]["data_offsets"][1] = 1 << 20;
        write_parts(path.toStdString(), p);
        const auto r = testing::run_cli(lm_run(path, dir.filePath("out")), 60000);
        QCOMPARE(r.exit_code, 4);
        QVERIFY2(r.err.contains(path) && r.err.contains("tensor 'train.labels' has data_offsets"), qPrintable(r.err));
    }

    // The bound of docs/own-model.md "The data file": a run on a 420 MB file
    // has at most the anonymous memory of the same run on a 1 MB file (the
    // runtime, model, optimizer and batches: all independent of the file) plus
    // 32 bytes per sample (the loader keeps 24: the sample's label-item count
    // and its place in the epoch's permutation and this rank's order, int64
    // each; the allocator keeps up to 8 of transient copies) plus 32 MiB (the
    // allocator's and threads' difference between two runs). Reading the file
    // whole, as a torch.save file is read, would exceed it by the file's size.
    void anonymousMemoryBounded() {
        QTemporaryDir dir;
        constexpr std::int64_t big_n = 1'280'000, small_n = 4096; // 64 int32 ids, 64 mask bytes, 1 int64 label
        const auto big = dir.filePath("big.safetensors"), small = dir.filePath("small.safetensors");
        write_token_file(big.toStdString(), big_n);
        write_token_file(small.toStdString(), small_n);
        const auto file_size = static_cast<std::int64_t>(QFileInfo(big).size());
        auto run = [&](const QString& data, const QString& out) {
            return QStringList{"--dataset", "tensors", "--data", data, "--model", "mlp", "--batch-size", "32",
                               "--accumulation-steps", "2", "--max-steps", "20", "--eval-strategy", "no",
                               "--save-strategy", "no", "--threads", "1", "--quiet", "--output-dir", out};
        };
        const auto s = watch_run(run(small, dir.filePath("small")), 240000);
        QVERIFY2(s.result.exit_code == 0, qPrintable(s.result.err));
        const auto b = watch_run(run(big, dir.filePath("big")), 240000);
        QVERIFY2(b.result.exit_code == 0, qPrintable(b.result.err));
        const auto steps = testing::records_of<StepRecord>(testing::read_records(dir.filePath("big") + "/metrics.jsonl"));
        QCOMPARE(steps.size(), std::size_t(20));
        for (const auto& step : steps) QVERIFY(std::isfinite(step.loss));
        QVERIFY(s.peak_anon > 0 && b.peak_anon > 0);
        const std::int64_t bound = s.peak_anon + 32 * (big_n - small_n) + (std::int64_t{32} << 20);
        qInfo("file %.0f MiB; peak RssAnon %.1f MiB (1 MB file: %.1f MiB, bound %.1f MiB); peak RssFile %.1f MiB",
              file_size / 1048576.0, b.peak_anon / 1048576.0, s.peak_anon / 1048576.0, bound / 1048576.0,
              b.peak_file / 1048576.0);
        QVERIFY2(b.peak_anon <= bound, "the run's anonymous memory grew with the file");
        QVERIFY(bound - s.peak_anon < file_size / 4);
    }
};

QTEST_GUILESS_MAIN(TestSafetensorsData)
#include "test_safetensors_data.moc"

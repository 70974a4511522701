// The CUDA tests (ctest -L cuda): accum-run on a CUDA device, end to end.
//
// Plain C++ without Qt and without LibTorch headers, so that a GPU server with
// neither Qt nor a compiler cache builds them in seconds; they drive the real
// accum-run and read what it writes (metrics.jsonl, summary.json, exit codes).
// One CTest test per case: `test_cuda CASE`. Without a CUDA device (or with a
// LibTorch built without CUDA) every case says why and exits 77, which CTest
// reports as skipped.
//
// Extending: a case is a function in kCases. Two are written ahead of the
// features they test and turn themselves on when those land:
//  - memory_records checks the memory categories (parameters_bytes,
//    gradients_bytes, optimizer_state_bytes, activations_bytes) as soon as the
//    memory records carry them, and says "not in this build" until then;
//  - data_parallel_nccl runs when the machine has two GPUs or more and
//    accum-run --help lists --nproc-per-node, and skips saying which is missing.
#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

struct Skip {
    std::string why;
};
struct Failure {
    std::string what;
};

#define CHECK(condition, message)                                                                                      \
    do {                                                                                                               \
        if (!(condition)) {                                                                                            \
            std::ostringstream what_;                                                                                  \
            what_ << message << " [" #condition ", line " << __LINE__ << "]";                                          \
            throw Failure{what_.str()};                                                                                \
        }                                                                                                              \
    } while (false)

std::vector<std::string> g_notes; // what a case measured, printed with its verdict

void note(const std::string& line) { g_notes.push_back(line); }

std::string sci(double x) {
    std::ostringstream s;
    s.precision(2);
    s << std::scientific << x;
    return s.str();
}

std::string bytes(std::int64_t b) {
    std::ostringstream s;
    s.precision(1);
    s << std::fixed << static_cast<double>(b) / (1024.0 * 1024.0) << " MiB";
    return s.str();
}

// ---------------------------------------------------------------- processes

std::string shell_quote(const std::string& s) {
    std::string q = "'";
    for (const char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

struct Result {
    int exit_code = -1; // -1: killed by a signal (see signal)
    int signal = 0;
    std::string output; // stdout and stderr together
};

Result run_accum_run(const std::vector<std::string>& args) {
    std::string command = shell_quote(ACCUM_RUN_EXE);
    for (const auto& a : args) command.append(" ").append(shell_quote(a));
    command += " 2>&1";
    Result r;
    FILE* pipe = popen(command.c_str(), "r");
    if (!pipe) throw Failure{"cannot start " + command};
    char buffer[4096];
    while (const auto n = std::fread(buffer, 1, sizeof buffer, pipe)) r.output.append(buffer, n);
    const int status = pclose(pipe);
    if (WIFEXITED(status))
        r.exit_code = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
        r.signal = WTERMSIG(status);
    return r;
}

std::string tail(const std::string& text, std::size_t n = 1500) {
    return text.size() <= n ? text : "…" + text.substr(text.size() - n);
}

// A temporary directory, removed with everything in it.
class TempDir {
public:
    TempDir() {
        std::string pattern = (fs::temp_directory_path() / "accum-cuda-XXXXXX").string();
        if (!mkdtemp(pattern.data())) throw Failure{"cannot create a temporary directory"};
        path_ = pattern;
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const fs::path& path() const { return path_; }

private:
    fs::path path_;
};

// ---------------------------------------------------------------- devices

struct Devices {
    int cuda = 0;                  // available CUDA devices
    std::int64_t total_bytes = 0;  // of cuda:0
    std::string why_none;
};

// From `accum-run devices`: "cuda:0<TAB>available<TAB>CUDA device 0 (139.8 GiB)", or
// "cuda<TAB>unavailable: <reason><TAB>CUDA".
Devices find_devices() {
    const auto r = run_accum_run({"devices"});
    if (r.exit_code != 0) throw Failure{"accum-run devices failed: " + tail(r.output)};
    Devices d;
    std::istringstream lines(r.output);
    for (std::string line; std::getline(lines, line);) {
        const auto tab = line.find('\t'), tab2 = line.find('\t', tab + 1);
        if (tab == std::string::npos) continue;
        const std::string name = line.substr(0, tab);
        const std::string status = line.substr(tab + 1, tab2 == std::string::npos ? std::string::npos : tab2 - tab - 1);
        if (name.rfind("cuda", 0) != 0) continue;
        if (status != "available") {
            d.why_none = status.substr(std::min(status.size(), std::string("unavailable: ").size()));
            continue;
        }
        ++d.cuda;
        if (name == "cuda:0" && tab2 != std::string::npos) {
            // "(139.8 GiB)": the size as format_byte_size wrote it.
            const auto open = line.rfind('('), close = line.rfind(')');
            if (open != std::string::npos && close > open) {
                std::istringstream size(line.substr(open + 1, close - open - 1));
                double value = 0;
                std::string unit;
                size >> value >> unit;
                const std::map<std::string, double> units{{"B", 1.0},
                                                          {"KiB", 1024.0},
                                                          {"MiB", 1024.0 * 1024},
                                                          {"GiB", 1024.0 * 1024 * 1024},
                                                          {"TiB", 1024.0 * 1024 * 1024 * 1024}};
                if (const auto u = units.find(unit); u != units.end())
                    d.total_bytes = static_cast<std::int64_t>(value * u->second);
            }
        }
    }
    if (d.cuda == 0 && d.why_none.empty()) d.why_none = "accum-run devices lists no CUDA device";
    return d;
}

const Devices& devices() {
    static const Devices d = find_devices();
    return d;
}

void require_cuda(int count = 1) {
    const auto& d = devices();
    if (d.cuda == 0) throw Skip{"no CUDA device: " + d.why_none};
    if (d.cuda < count)
        throw Skip{"needs " + std::to_string(count) + " CUDA devices, this machine has " + std::to_string(d.cuda)};
}

// ---------------------------------------------------------------- data

// Fashion-MNIST when it is there ($ACCUM_FASHION_MNIST_DIR, else Debian's
// dataset-fashion-mnist); otherwise a stand-in of the same shape: 4096 + 1024
// images of 28 × 28 whose label is the row of their brightest band, so that the
// models learn something. The tests compare runs with each other, never with
// Fashion-MNIST's accuracy, so either serves.
void write_idx(const fs::path& path, const std::vector<std::int32_t>& dims, const std::vector<std::uint8_t>& data,
               std::int64_t zero_bytes = 0) {
    std::ofstream f(path, std::ios::binary);
    const unsigned char magic[4] = {0, 0, 0x08, static_cast<unsigned char>(dims.size())};
    f.write(reinterpret_cast<const char*>(magic), 4);
    for (const auto d : dims) {
        const unsigned char be[4] = {static_cast<unsigned char>(d >> 24), static_cast<unsigned char>(d >> 16),
                                     static_cast<unsigned char>(d >> 8), static_cast<unsigned char>(d)};
        f.write(reinterpret_cast<const char*>(be), 4);
    }
    f.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
    f.close();
    if (!f) throw Failure{"cannot write " + path.string()};
    // Zeros after the data, as a sparse file: the huge data set costs no disk.
    if (zero_bytes > 0) fs::resize_file(path, fs::file_size(path) + static_cast<std::uintmax_t>(zero_bytes));
}

void write_image_split(const fs::path& dir, const std::string& prefix, std::int32_t count, std::uint32_t seed) {
    std::vector<std::uint8_t> images(static_cast<std::size_t>(count) * 28 * 28), labels(static_cast<std::size_t>(count));
    std::uint32_t state = seed;
    auto next = [&state] { return state = state * 1664525u + 1013904223u; };
    for (std::int32_t i = 0; i < count; ++i) {
        const int label = static_cast<int>(next() >> 24) % 10;
        labels[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(label);
        for (int p = 0; p < 28 * 28; ++p) {
            const int row = p / 28;
            const bool band = row / 3 == label;
            images[static_cast<std::size_t>(i) * 784 + static_cast<std::size_t>(p)] =
                static_cast<std::uint8_t>((next() >> 26) + (band ? 160 : 20));
        }
    }
    write_idx(dir / (prefix + "-images-idx3-ubyte"), {count, 28, 28}, images);
    write_idx(dir / (prefix + "-labels-idx1-ubyte"), {count}, labels);
}

std::string image_data_dir(const TempDir& tmp) {
    for (const char* candidate : {static_cast<const char*>(std::getenv("ACCUM_FASHION_MNIST_DIR")),
                                  "/usr/share/datasets/fashion-mnist"})
        if (candidate && fs::exists(fs::path(candidate) / "train-images-idx3-ubyte.gz")) return candidate;
    const fs::path dir = tmp.path() / "images";
    if (!fs::exists(dir / "train-images-idx3-ubyte")) {
        fs::create_directories(dir);
        write_image_split(dir, "train", 4096, 1);
        write_image_split(dir, "t10k", 1024, 2);
        note("data: a generated stand-in for Fashion-MNIST (set ACCUM_FASHION_MNIST_DIR to use the real one)");
    }
    return dir.string();
}

// ---------------------------------------------------------------- runs

struct Run {
    Result process;
    std::vector<json> steps, memory;
    json summary;
};

// accum-run with `args`, writing into a fresh directory under `tmp`.
Run train(const TempDir& tmp, const std::string& name, std::vector<std::string> args) {
    const fs::path out = tmp.path() / name;
    args.insert(args.end(), {"--output-dir", out.string(), "--quiet", "--eval-strategy", "no", "--save-strategy", "no"});
    Run run;
    run.process = run_accum_run(args);
    CHECK(run.process.signal == 0, name << ": accum-run was killed by signal " << run.process.signal << ":\n"
                                        << tail(run.process.output));
    std::ifstream metrics(out / "metrics.jsonl");
    for (std::string line; std::getline(metrics, line);) {
        if (line.empty()) continue;
        const auto j = json::parse(line);
        const auto type = j.value("type", "");
        if (type == "step") run.steps.push_back(j);
        if (type == "memory") run.memory.push_back(j);
        if (type == "summary") run.summary = j;
    }
    std::ifstream summary(out / "summary.json");
    if (summary) run.summary = json::parse(summary);
    return run;
}

Run train_ok(const TempDir& tmp, const std::string& name, const std::vector<std::string>& args) {
    auto run = train(tmp, name, args);
    CHECK(run.process.exit_code == 0, name << ": accum-run exited " << run.process.exit_code << ":\n"
                                           << tail(run.process.output));
    CHECK(!run.steps.empty(), name << ": no step records in metrics.jsonl");
    return run;
}

// The largest difference of the step losses, relative to max(1, |b|); both runs
// must have the same number of steps.
double loss_difference(const Run& a, const Run& b, const std::string& what) {
    CHECK(a.steps.size() == b.steps.size(),
          what << ": " << a.steps.size() << " against " << b.steps.size() << " step records");
    double worst = 0;
    for (std::size_t i = 0; i < a.steps.size(); ++i) {
        const double x = a.steps[i]["loss"].get<double>(), y = b.steps[i]["loss"].get<double>();
        CHECK(std::isfinite(x) && std::isfinite(y), what << ": step " << i + 1 << " loss " << x << " / " << y);
        worst = std::max(worst, std::abs(x - y) / std::max(1.0, std::abs(y)));
    }
    return worst;
}

std::int64_t max_of(const std::vector<json>& records, const char* key) {
    std::int64_t m = 0;
    for (const auto& r : records) m = std::max(m, r.value(key, std::int64_t(0)));
    return m;
}

std::vector<std::string> common(const std::string& model, const std::string& dataset, const std::string& data_dir,
                                const std::string& device, std::int64_t batch, std::int64_t k, std::int64_t steps) {
    std::vector<std::string> a{"--model", model, "--dataset", dataset, "--device", device,
                               "--batch-size", std::to_string(batch), "--accumulation-steps", std::to_string(k),
                               "--max-steps", std::to_string(steps), "--seed", "0"};
    if (!data_dir.empty()) a.insert(a.end(), {"--data", data_dir});
    return a;
}

// ---------------------------------------------------------------- cases

// ARCHITECTURE.md I7 (the three styles agree): the plain loop, the Accelerator and the Trainer give the
// same trajectory when the windows divide the epoch; on CUDA as on the CPU.
void styles_agree() {
    require_cuda();
    TempDir tmp;
    const auto images = image_data_dir(tmp);
    struct Setup {
        std::string model, dataset, data;
    };
    for (const auto& s : {Setup{"mlp", "synthetic-pairs", ""}, Setup{"cnn", "fashion-mnist", images}}) {
        std::vector<Run> runs;
        for (const std::string mode : {"pytorch", "accelerator", "trainer"}) {
            auto args = common(s.model, s.dataset, s.data, "cuda", 16, 4, 20);
            args.insert(args.end(), {"--mode", mode});
            runs.push_back(train_ok(tmp, s.model + "-" + mode, args));
            CHECK(runs.back().summary.value("device", "") == "cuda:0",
                  s.model << " " << mode << " ran on " << runs.back().summary.value("device", "?"));
        }
        const double d1 = loss_difference(runs[0], runs[1], s.model + ": pytorch vs accelerator");
        const double d2 = loss_difference(runs[0], runs[2], s.model + ": pytorch vs trainer");
        note(s.model + " on cuda, 20 steps of 16 × 4: largest step-loss difference accelerator " + sci(d1) +
             ", trainer " + sci(d2));
        CHECK(d1 <= 1e-5 && d2 <= 1e-5, s.model << ": the styles differ by " << std::max(d1, d2) << " (limit 1e-5)");
    }
}

// CUDA against the CPU over 50 optimizer steps of 64 × 4: the same losses within
// 1e-3 (relative to max(1, loss)). The MLP's matrix products are FP32 on both
// (LibTorch leaves TF32 off for matmul); the CNN is left out on purpose: cuDNN's
// convolutions default to TF32 on Ampere and later, as in eager PyTorch.
void cpu_agreement() {
    require_cuda();
    TempDir tmp;
    const auto images = image_data_dir(tmp);
    struct Setup {
        std::string name, dataset, data;
    };
    for (const auto& s : {Setup{"mlp-pairs", "synthetic-pairs", ""}, Setup{"mlp-images", "fashion-mnist", images}}) {
        const auto cpu = train_ok(tmp, s.name + "-cpu", common("mlp", s.dataset, s.data, "cpu", 64, 4, 50));
        const auto gpu = train_ok(tmp, s.name + "-cuda", common("mlp", s.dataset, s.data, "cuda", 64, 4, 50));
        CHECK(gpu.steps.size() == 50, s.name << ": " << gpu.steps.size() << " steps on cuda, not 50");
        const double d = loss_difference(cpu, gpu, s.name + ": cpu vs cuda");
        note(s.name + ": 50 steps of 64 × 4, largest step-loss difference cpu vs cuda " + sci(d));
        CHECK(d <= 1e-3, s.name << ": cuda and cpu differ by " << d << " (limit 1e-3)");
    }
}

// Memory records on CUDA: allocated (memory_bytes), reserved and peak device
// memory, consistent with each other; and, once the records carry them, the
// categories add up to the allocated total and the interval peak's parts to
// the interval peak.
void memory_records() {
    require_cuda();
    TempDir tmp;
    auto args = common("cnn", "fashion-mnist", image_data_dir(tmp), "cuda", 64, 4, 30);
    const auto run = train_ok(tmp, "cnn-memory", args);
    CHECK(!run.memory.empty(), "no memory records");
    std::int64_t previous_peak = 0;
    bool categories = false;
    bool interval_peaks = false;
    std::int64_t largest_peak_activations = 0;
    for (const auto& r : run.memory) {
        const auto allocated = r.value("memory_bytes", std::int64_t(-1));
        const auto reserved = r.value("reserved_bytes", std::int64_t(-1));
        const auto peak = r.value("peak_memory_bytes", std::int64_t(-1));
        CHECK(r.value("cuda", false), "a memory record without cuda: true: " << r.dump());
        CHECK(allocated > 0, "allocated device memory " << allocated << ": " << r.dump());
        CHECK(reserved >= allocated, "reserved " << reserved << " below allocated " << allocated);
        CHECK(peak >= allocated, "peak " << peak << " below allocated " << allocated);
        // "peak of the run so far": it never goes down within a run.
        CHECK(peak >= previous_peak, "the run's peak went down from " << previous_peak << " to " << peak);
        previous_peak = peak;
        if (r.contains("parameters_bytes")) {
            categories = true;
            std::int64_t sum = 0;
            for (const char* key : {"parameters_bytes", "gradients_bytes", "optimizer_state_bytes", "activations_bytes"}) {
                CHECK(r.contains(key), "a memory record with parameters_bytes but no " << key);
                CHECK(r[key].get<std::int64_t>() >= 0, key << " is negative");
                sum += r[key].get<std::int64_t>();
            }
            // Within the caching allocator's rounding (512-byte blocks) of every tensor.
            CHECK(std::abs(sum - allocated) <= std::max<std::int64_t>(1 << 20, allocated / 100),
                  "the categories add up to " << sum << ", the allocator has " << allocated);
        }
        // The peak since the previous record and its parts: they add
        // up to it within 1 %, it holds the memory now and stays within the run's peak.
        if (r.contains("interval_peak_bytes")) {
            interval_peaks = true;
            const auto interval_peak = r["interval_peak_bytes"].get<std::int64_t>();
            std::int64_t sum = 0;
            for (const char* key : {"peak_parameters_bytes", "peak_gradients_bytes", "peak_optimizer_state_bytes",
                                    "peak_activations_bytes"}) {
                CHECK(r.contains(key), "a memory record with interval_peak_bytes but no " << key);
                CHECK(r[key].get<std::int64_t>() >= 0, key << " is negative: " << r.dump());
                sum += r[key].get<std::int64_t>();
            }
            CHECK(std::abs(double(sum - interval_peak)) <= 0.01 * double(interval_peak),
                  "the peak's parts add up to " << sum << ", the interval peak is " << interval_peak);
            CHECK(interval_peak >= allocated, "interval peak " << interval_peak << " below allocated " << allocated);
            CHECK(interval_peak <= peak, "interval peak " << interval_peak << " above the run's peak " << peak);
            largest_peak_activations = std::max(largest_peak_activations, r["peak_activations_bytes"].get<std::int64_t>());
        }
    }
    if (interval_peaks)
        CHECK(largest_peak_activations > 0, "no memory record's interval peak holds activations");
    for (const auto& s : run.steps)
        CHECK(s.value("peak_memory_bytes", std::int64_t(0)) >= s.value("memory_bytes", std::int64_t(0)),
              "a step's peak below its current memory: " << s.dump());
    const auto summary_peak = run.summary.value("peak_memory_bytes", std::int64_t(0));
    CHECK(summary_peak >= max_of(run.steps, "peak_memory_bytes"),
          "the summary's peak " << summary_peak << " is below a step's peak " << max_of(run.steps, "peak_memory_bytes"));
    note("cnn 64 × 4 on cuda: " + std::to_string(run.memory.size()) + " memory records, peak " + bytes(summary_peak) +
         ", reserved up to " + bytes(max_of(run.memory, "reserved_bytes")) +
         (categories ? "; categories add up" : "; memory categories: not in this build yet") +
         (interval_peaks ? "; interval peaks add up, activations at the peak up to " + bytes(largest_peak_activations)
                         : "; interval peaks: not in this build"));
}

// Peak device memory of the CNN at micro-batch `batch` × `k` (2 optimizer steps),
// and the most the caching allocator reserved for it.
struct Peak {
    std::int64_t allocated = 0, reserved = 0;
};
Peak measure_cnn(const TempDir& tmp, const std::string& data, std::int64_t batch, std::int64_t k) {
    const auto run = train_ok(tmp, "cnn-measure-" + std::to_string(batch) + "x" + std::to_string(k),
                              common("cnn", "fashion-mnist", data, "cuda", batch, k, 2));
    return {std::max(max_of(run.memory, "peak_memory_bytes"), run.summary.value("peak_memory_bytes", std::int64_t(0))),
            max_of(run.memory, "reserved_bytes")};
}

// --memory-budget on CUDA limits the caching allocator (its memory fraction):
// under a budget between what 64 × 4 reserves and what 256 × 1 needs, 256 × 1
// runs out of memory (exit 3) with a suggestion measured to fit, and 64 × 4 fits.
void memory_budget() {
    require_cuda();
    TempDir tmp;
    const auto data = image_data_dir(tmp);
    const auto big = measure_cnn(tmp, data, 256, 1), small = measure_cnn(tmp, data, 64, 4);
    const std::int64_t budget = (small.reserved + big.allocated) / 2;
    note("cnn peaks: 256 × 1 allocates " + bytes(big.allocated) + "; 64 × 4 reserves " + bytes(small.reserved) +
         "; budget " + bytes(budget));
    CHECK(small.reserved < budget && budget < big.allocated,
          "no budget separates 64 × 4 (reserves " << small.reserved << ") from 256 × 1 (allocates " << big.allocated
                                                   << ")");
    auto args = common("cnn", "fashion-mnist", data, "cuda", 256, 1, 2);
    args.insert(args.end(), {"--memory-budget", std::to_string(budget)});
    const auto oom = train(tmp, "cnn-256x1-budget", args);
    CHECK(oom.process.exit_code == 3, "256 × 1 under the budget exited " << oom.process.exit_code << ", not 3:\n"
                                                                         << tail(oom.process.output));
    CHECK(oom.summary.value("status", "") == "out_of_memory", "summary status " << oom.summary.value("status", "?"));
    const auto sb = oom.summary.value("suggested_batch_size", std::int64_t(0));
    const auto sk = oom.summary.value("suggested_accumulation_steps", std::int64_t(0));
    CHECK(sb > 0 && sb < 256 && sb * sk >= 256, "suggested " << sb << " × " << sk);
    const auto message = oom.summary.value("message", "");
    CHECK(message.find("measured to fit") != std::string::npos, "the suggestion was not measured: " << message);
    note("256 × 1 under the budget: exit 3, suggested " + std::to_string(sb) + " × " + std::to_string(sk) +
         " (measured)");

    args = common("cnn", "fashion-mnist", data, "cuda", 64, 4, 2);
    args.insert(args.end(), {"--memory-budget", std::to_string(budget)});
    const auto fits = train_ok(tmp, "cnn-64x4-budget", args);
    CHECK(fits.summary.value("status", "") == "completed", "64 × 4: " << fits.summary.value("message", ""));
    note("64 × 4 under the same budget: completed, peak " +
         bytes(fits.summary.value("peak_memory_bytes", std::int64_t(0))));
}

// A real CUDA out-of-memory, no budget: a micro-batch whose activations need
// twice the device (measured per sample at 256 × 1), on a data set that large
// (zero images, written as a sparse file). accum-run must end with exit 3 and a
// suggestion, never a crash.
void real_out_of_memory() {
    require_cuda();
    const auto& d = devices();
    CHECK(d.total_bytes > 0, "accum-run devices did not say the device's size");
    TempDir tmp;
    const auto per_sample = measure_cnn(tmp, image_data_dir(tmp), 256, 1).allocated / 256;
    CHECK(per_sample > 0, "no per-sample memory measured");
    const std::int64_t batch = 2 * d.total_bytes / per_sample + 1;
    if (batch > 1000000) // accum-run's largest micro-batch
        throw Skip{"the device (" + bytes(d.total_bytes) + ") needs a micro-batch above 1000000 to run out of memory"};
    const fs::path data = tmp.path() / "huge";
    fs::create_directories(data);
    write_idx(data / "train-images-idx3-ubyte", {static_cast<std::int32_t>(batch), 28, 28}, {}, batch * 784);
    write_idx(data / "train-labels-idx1-ubyte", {static_cast<std::int32_t>(batch)}, {}, batch);
    write_image_split(data, "t10k", 64, 3);
    const auto run = train(tmp, "cnn-huge", common("cnn", "fashion-mnist", data.string(), "cuda", batch, 1, 1));
    CHECK(run.process.exit_code == 3, "micro-batch " << batch << " exited " << run.process.exit_code << ", not 3:\n"
                                                     << tail(run.process.output));
    CHECK(run.summary.value("status", "") == "out_of_memory", "summary status " << run.summary.value("status", "?"));
    const auto sb = run.summary.value("suggested_batch_size", std::int64_t(0));
    CHECK(sb > 0 && sb < batch, "suggested micro-batch " << sb);
    note("micro-batch " + std::to_string(batch) + " (" + bytes(per_sample) + " a sample, device " +
         bytes(d.total_bytes) + "): exit 3, suggested " + std::to_string(sb) + " × " +
         std::to_string(run.summary.value("suggested_accumulation_steps", std::int64_t(0))));
}

// ARCHITECTURE.md I14 (N ranks equal one process) with NCCL: 2 processes × 16 × 2 equal 1 process × 32 × 2
// step for step, with one gradient all-reduce per optimizer step.
void data_parallel_nccl() {
    require_cuda(2);
    if (run_accum_run({"--help"}).output.find("--nproc-per-node") == std::string::npos)
        throw Skip{"accum-run has no --nproc-per-node in this build: data-parallel training is not there yet"};
    TempDir tmp;
    const auto single = train_ok(tmp, "single", common("mlp", "synthetic-pairs", "", "cuda", 32, 2, 12));
    auto args = common("mlp", "synthetic-pairs", "", "cuda", 16, 2, 12);
    args.insert(args.end(), {"--nproc-per-node", "2", "--backend", "nccl", "--dist-timeout", "60"});
    const auto ranks = train_ok(tmp, "two-ranks", args);
    CHECK(ranks.summary.value("world_size", 0) == 2, "world_size " << ranks.summary.value("world_size", 0));
    for (const auto& s : ranks.steps)
        CHECK(s.value("grad_allreduces", -1) == 1, "all-reduces in a step: " << s.dump());
    const double d = loss_difference(single, ranks, "1 × 32 × 2 vs 2 × 16 × 2");
    note("2 ranks (NCCL) against 1: largest step-loss difference " + sci(d));
    CHECK(d <= 1e-5, "2 ranks differ from 1 by " << d << " (limit 1e-5)");
}

// Mixed precision on CUDA: fp16 autocast with the dynamic loss scaler
// (ATen's CUDA kernels _amp_foreach_non_finite_check_and_unscale_ and
// _amp_update_scale_), and bf16 where the device has it. The three styles agree
// with each other in fp16, and fp16 stays near fp32 (the mean of the per-step
// relative differences; single steps drift, as on the CPU in bf16). An initial
// scale of 2^40 overflows fp16 until the scaler has backed off: every skipped
// window halves the scale once, and no other changes it within 60 windows.
void mixed_precision() {
    require_cuda();
    TempDir tmp;
    const auto images = image_data_dir(tmp);
    const auto fp32 = train_ok(tmp, "fp32", common("mlp", "fashion-mnist", images, "cuda", 64, 4, 60));
    std::vector<Run> fp16;
    for (const std::string mode : {"pytorch", "accelerator", "trainer"}) {
        auto args = common("mlp", "fashion-mnist", images, "cuda", 64, 4, 60);
        args.insert(args.end(), {"--mode", mode, "--mixed-precision", "fp16"});
        fp16.push_back(train_ok(tmp, "fp16-" + mode, args));
        for (const auto& step : fp16.back().steps)
            CHECK(step.value("loss_scale", 0.0) > 0 && step.value("loss_scale", 0.0) <= 65536.0,
                  mode << ": fp16 without a loss scale of at most 2^16: " << step.dump());
    }
    const double styles = std::max(loss_difference(fp16[0], fp16[1], "fp16 pytorch vs accelerator"),
                                   loss_difference(fp16[0], fp16[2], "fp16 pytorch vs trainer"));
    double mean = 0.0;
    for (std::size_t i = 0; i < fp32.steps.size(); ++i) {
        const double a = fp32.steps[i]["loss"].get<double>(), b = fp16[0].steps[i]["loss"].get<double>();
        mean += std::abs(a - b) / std::abs(a) / static_cast<double>(fp32.steps.size());
    }
    note("fp16 on cuda, 60 steps of 64 × 4: styles differ by " + sci(styles) + "; mean relative difference to fp32 " +
         sci(mean) + "; final loss scale " + sci(fp16[0].steps.back().value("loss_scale", 0.0)));
    CHECK(styles <= 1e-5, "the styles differ in fp16 by " << styles << " (limit 1e-5)");
    CHECK(mean <= 0.02, "fp16 leaves fp32 by " << mean << " on average (limit 2 %)");

    auto overflow = common("mlp", "fashion-mnist", images, "cuda", 64, 4, 60);
    overflow.insert(overflow.end(), {"--mixed-precision", "fp16", "--loss-scale-init", "1099511627776"}); // 2^40
    const auto backed_off = train_ok(tmp, "fp16-overflow", overflow);
    int skipped = 0;
    for (std::size_t i = 0; i + 1 < backed_off.steps.size(); ++i) {
        const auto& s = backed_off.steps[i];
        const double scale = s.value("loss_scale", 0.0), next = backed_off.steps[i + 1].value("loss_scale", 0.0);
        skipped += s.value("skipped", false);
        CHECK(next == (s.value("skipped", false) ? scale / 2 : scale), "the scale went " << scale << " → " << next
                                                                                      << " at step " << i + 1);
    }
    note("fp16 from a scale of 2^40: " + std::to_string(skipped) + " windows skipped, scale → " +
         sci(backed_off.steps.back().value("loss_scale", 0.0)));
    CHECK(skipped >= 1, "no window overflowed fp16 at a scale of 2^40");
    CHECK(backed_off.summary.value("status", "") == "completed", "status " << backed_off.summary.value("status", ""));

    auto bf16 = common("mlp", "fashion-mnist", images, "cuda", 64, 4, 60);
    bf16.insert(bf16.end(), {"--mixed-precision", "bf16"});
    const auto b = train(tmp, "bf16", bf16);
    if (b.process.exit_code == 2) {
        note("bf16: refused on this device: " + tail(b.process.output));
        return;
    }
    CHECK(b.process.exit_code == 0, "bf16: accum-run exited " << b.process.exit_code << ":\n" << tail(b.process.output));
    double bf16_mean = 0.0;
    for (std::size_t i = 0; i < fp32.steps.size() && i < b.steps.size(); ++i) {
        const double x = fp32.steps[i]["loss"].get<double>(), y = b.steps[i]["loss"].get<double>();
        bf16_mean += std::abs(x - y) / std::abs(x) / static_cast<double>(fp32.steps.size());
    }
    note("bf16 on cuda: mean relative difference to fp32 " + sci(bf16_mean));
    CHECK(b.steps.size() == fp32.steps.size() && bf16_mean <= 0.02, "bf16 leaves fp32 by " << bf16_mean);
}

const std::vector<std::pair<std::string, std::function<void()>>> kCases = {
    {"styles_agree", styles_agree},
    {"cpu_agreement", cpu_agreement},
    {"memory_records", memory_records},
    {"memory_budget", memory_budget},
    {"real_out_of_memory", real_out_of_memory},
    {"data_parallel_nccl", data_parallel_nccl},
    {"mixed_precision", mixed_precision},
};

} // namespace

int main(int argc, char** argv) {
    const std::string name = argc > 1 ? argv[1] : "";
    if (name == "--list") {
        for (const auto& [n, f] : kCases) std::cout << n << "\n";
        return 0;
    }
    const auto it = std::find_if(kCases.begin(), kCases.end(), [&](const auto& c) { return c.first == name; });
    if (it == kCases.end()) {
        std::cerr << "usage: test_cuda CASE (test_cuda --list names them)\n";
        return 2;
    }
    int code = 0;
    std::string verdict;
    try {
        it->second();
        verdict = "PASS cuda." + name;
    } catch (const Skip& s) {
        verdict = "SKIP cuda." + name + ": " + s.why;
        code = 77;
    } catch (const Failure& f) {
        verdict = "FAIL cuda." + name + ": " + f.what;
        code = 1;
    } catch (const std::exception& e) {
        verdict = "FAIL cuda." + name + ": " + e.what();
        code = 1;
    }
    for (const auto& n : g_notes) std::cout << "  " << n << "\n";
    std::cout << verdict << std::endl;
    return code;
}
// SPDX-License-Identifier: GPL-3.0-or-later

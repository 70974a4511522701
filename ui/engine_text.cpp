#include "engine_text.h"

#include <QCoreApplication>
#include <QRegularExpression>
#include <map>

#include "accum/engine_messages.h"

namespace studio {

namespace {
class EngineText {
    Q_DECLARE_TR_FUNCTIONS(studio::EngineText)
};

namespace code = accum::message_code;

// A message's arguments as the interface shows them: in rich text escaped, and
// the numbers a reader acts on in bold.
class Args {
public:
    Args(const std::map<std::string, std::string>& args, bool rich) : args_(args), rich_(rich) {}

    bool has(const char* name) const {
        const auto it = args_.find(name);
        return it != args_.end() && !it->second.empty();
    }
    std::string raw(const char* name) const {
        const auto it = args_.find(name);
        return it == args_.end() ? std::string() : it->second;
    }
    QString operator[](const char* name) const {
        const auto text = QString::fromStdString(raw(name));
        return rich_ ? text.toHtmlEscaped() : text;
    }
    QString strong(const char* name) const {
        return rich_ ? QStringLiteral("<b>%1</b>").arg((*this)[name]) : (*this)[name];
    }
    bool rich() const { return rich_; }

private:
    const std::map<std::string, std::string>& args_;
    bool rich_;
};

std::optional<QString> render(const std::string& c, const Args& a, int depth);

// The message whose code is the argument `name` (the suggestion inside an
// out-of-memory message, the plan's reason inside a suggestion).
QString inner(const Args& a, const char* name, int depth) {
    if (!a.has(name) || depth > 4) return {};
    return render(a.raw(name), a, depth + 1).value_or(QString());
}

QString auto_find_suffix(const Args& a) {
    if (!a.has("auto_batch_size")) return {};
    return EngineText::tr(" (auto_find_batch_size chose micro-batch %1 × %2)")
        .arg(a["auto_batch_size"], a["auto_accumulation_steps"]);
}

QString checkpoint_suffix(const Args& a) {
    QString text;
    if (a.has("checkpoint")) text += EngineText::tr("; checkpoint %1").arg(a["checkpoint"]);
    if (a.has("checkpoint_error"))
        text += EngineText::tr("; checkpoint (could not be written: %1)").arg(a["checkpoint_error"]);
    return text;
}

QString last_good_checkpoint_suffix(const Args& a) {
    QString text;
    if (a.has("checkpoint")) text += EngineText::tr("; last good checkpoint %1").arg(a["checkpoint"]);
    if (a.has("checkpoint_error"))
        text += EngineText::tr("; the last good checkpoint could not be written: %1").arg(a["checkpoint_error"]);
    return text;
}

// What ran out: the allocation refused and the memory in use when the counting
// allocator said no, else the budget and the peak the run reached.
QString out_of_memory_what(const Args& a, bool headline) {
    if (a.has("requested") && a.has("in_use") && a.has("budget")) {
        return (headline ? EngineText::tr("<b>Out of memory</b> at micro-batch %1 × %2 accumulation steps: it needed %3 "
                                          "more with %4 of the %5 budget in use.")
                         : EngineText::tr("Out of memory at micro-batch %1 × %2 accumulation steps: it needed %3 more "
                                          "with %4 of the %5 budget in use."))
            .arg(a["batch_size"], a["accumulation_steps"], a["requested"], a["in_use"], a["budget"]);
    }
    const QString budget = a.has("budget") ? a["budget"] : EngineText::tr("none");
    return (headline ? EngineText::tr("<b>Out of memory</b> at micro-batch %1 × %2 accumulation steps (budget %3, peak "
                                      "reached %4).")
                     : EngineText::tr("Out of memory at micro-batch %1 × %2 accumulation steps (budget %3, peak "
                                      "reached %4)."))
        .arg(a["batch_size"], a["accumulation_steps"], budget, a["peak"]);
}

QString reached_zero_prefix(const Args& a) {
    return a.has("reached_zero")
               ? EngineText::tr("auto_find_batch_size found no micro-batch that fits (it reached zero).") +
                     QLatin1Char(' ')
               : QString();
}

std::optional<QString> render(const std::string& c, const Args& a, int depth) {
    // ---------------------------------------------------------------- outcomes
    if (c == code::completed) {
        QString text = EngineText::tr("completed %1 optimizer steps").arg(a["steps"]);
        if (a.has("skipped"))
            text += EngineText::tr(" (%1 skipped as non-finite by --skip-nonfinite)").arg(a["skipped"]);
        if (a.has("overflow_skipped"))
            text += EngineText::tr(" (%1 skipped for overflow by the loss scaler)").arg(a["overflow_skipped"]);
        return text + auto_find_suffix(a);
    }
    if (c == code::stopped)
        return EngineText::tr("stopped at optimizer step %1").arg(a["step"]) + checkpoint_suffix(a) + auto_find_suffix(a);
    if (c == code::stopped_before_start) return EngineText::tr("stopped before the run started") + auto_find_suffix(a);
    if (c == code::out_of_memory) {
        QString text = reached_zero_prefix(a) + out_of_memory_what(a, false);
        if (const auto suggestion = inner(a, "suggestion", depth); !suggestion.isEmpty())
            text += QLatin1Char(' ') + suggestion;
        // LibTorch's own line, unless the allocation and the memory in use said it already.
        if (!a.has("requested") && a.has("error")) text += QStringLiteral(" [%1]").arg(a["error"]);
        return text;
    }
    if (c == code::diverged) {
        const QString text =
            a.has("gradient_only")
                ? EngineText::tr("the gradient norm became non-finite at optimizer step %1 (loss %2, gradient norm %3); "
                                 "the weights were left at step %4. Lower --lr or set --max-grad-norm.")
                : EngineText::tr("the loss became non-finite at optimizer step %1 (loss %2, gradient norm %3); the "
                                 "weights were left at step %4. Lower --lr or set --max-grad-norm.");
        return text.arg(a["step"], a["loss"], a["grad_norm"], a["good_step"]) + last_good_checkpoint_suffix(a);
    }
    if (c == code::diverged_detail) return a["detail"] + last_good_checkpoint_suffix(a);
    if (c == code::internal_error) return EngineText::tr("internal error: %1").arg(a["error"]);
    if (c == code::run_in_progress) // `running` is the engine's English: the studio says it in its own words
        return EngineText::tr("Another run is already in progress in this program, which trains one run at a time. "
                              "Wait for it to end or stop it, then start again.");
    // ------------------------------------------- the out-of-memory suggestion
    if (c == code::suggest_batch_one)
        return EngineText::tr("The micro-batch is already 1: raise the memory budget or use a smaller model.");
    if (c == code::suggest_halved) {
        const QString text =
            a.has("exact") ? EngineText::tr("Try micro-batch %1 × %2 accumulation steps: the same effective batch (%3) "
                                            "with about half the activation memory.")
                           : EngineText::tr("Try micro-batch %1 × %2 accumulation steps: effective batch %3, the nearest "
                                            "above, with about half the activation memory.");
        return text.arg(a.strong("suggested_batch_size"), a.strong("suggested_accumulation_steps"),
                        a["effective_batch"]);
    }
    if (c == code::suggest_measured) {
        QString text;
        if (a.has("checkpointing"))
            text = a.has("exact")
                       ? EngineText::tr("Try micro-batch %1 × %2 accumulation steps with gradient checkpointing: the "
                                        "same effective batch (%3), measured to fit: it peaked at %4 of the budget.")
                       : EngineText::tr("Try micro-batch %1 × %2 accumulation steps with gradient checkpointing: "
                                        "effective batch %3, the nearest above, measured to fit: it peaked at %4 of "
                                        "the budget.");
        else
            text = a.has("exact") ? EngineText::tr("Try micro-batch %1 × %2 accumulation steps: the same effective "
                                                   "batch (%3), measured to fit: it peaked at %4 of the budget.")
                                  : EngineText::tr("Try micro-batch %1 × %2 accumulation steps: effective batch %3, "
                                                   "the nearest above, measured to fit: it peaked at %4 of the budget.");
        text = text.arg(a.strong("suggested_batch_size"), a.strong("suggested_accumulation_steps"),
                        a["effective_batch"], a["measured_peak"]);
        // Why this lever (plan_faster, …), as one more sentence.
        if (a.has("why")) text += QLatin1Char(' ') + inner(a, "why", depth);
        return text;
    }
    if (c == code::plan_faster) {
        // A spread that includes 1 measured no difference, whatever the ratio's
        // middle: "no measurable difference (0.97–1.04 ×)", not "1.01 × faster". The
        // engine says so with `same`; a summary from before it, by its spread.
        if (a.has("spread") && (a.has("same") || spread_includes_one(a["spread"])))
            return (a.has("checkpointing")
                        ? EngineText::tr("%1 × %2 with gradient checkpointing against %3 × %4 without it: no measurable "
                                         "difference in speed (%5 ×, measured).")
                        : EngineText::tr("%1 × %2 without checkpointing against %3 × %4 with it: no measurable "
                                         "difference in speed (%5 ×, measured)."))
                .arg(a["faster_batch"], a["faster_steps"], a["slower_batch"], a["slower_steps"], a["spread"]);
        // The ratio with its spread where the engine measured one: "1.07 (1.03–1.12)".
        const QString ratio = a.has("spread") ? QStringLiteral("%1 (%2)").arg(a["ratio"], a["spread"]) : a["ratio"];
        return (a.has("checkpointing")
                    ? EngineText::tr("%1 × %2 with gradient checkpointing runs %3 × faster than %4 × %5 without it "
                                     "(measured).")
                    : EngineText::tr("%1 × %2 fits without checkpointing and runs %3 × faster than %4 × %5 with it "
                                     "(measured)."))
            .arg(a["faster_batch"], a["faster_steps"], ratio, a["slower_batch"], a["slower_steps"]);
    }
    if (c == code::plan_checkpointing_no_larger)
        return EngineText::tr("%1 × %2 fits without checkpointing, and checkpointing lets no larger micro-batch fit "
                              "(it would only add a second forward).")
            .arg(a["faster_batch"], a["faster_steps"]);
    if (c == code::plan_only_checkpointing)
        return EngineText::tr("Only with gradient checkpointing does a micro-batch this large fit.");
    if (c == code::suggest_nothing_fits) return EngineText::tr("Measured: %1.").arg(inner(a, "plan", depth));
    if (c == code::plan_predicted_too_big)
        return EngineText::tr("even micro-batch 1 is predicted to need %1, more than %2 (the budget less the safety "
                              "margin); raise the budget or use a smaller model")
            .arg(a["need"], a["usable"]);
    if (c == code::plan_nothing_fits)
        return EngineText::tr("no micro-batch fits the budget; raise the budget or use a smaller model");
    // -------------------------------------------------------- configuration
    if (c == code::invalid_configuration) {
        QString text = EngineText::tr("invalid setting --%1: %2").arg(a["option"], a["problem"]);
        if (a.has("more")) text += QStringLiteral("; ") + a["more"];
        return text;
    }
    if (c == code::config_error) return EngineText::tr("the configuration cannot run: %1").arg(a["detail"]);
    if (c == code::device_unavailable)
        return (a.has("no_cuda_build")
                    ? EngineText::tr("--device %1 was asked for, but this build's LibTorch has no CUDA; use --device "
                                     "cpu or auto")
                    : EngineText::tr("--device %1 was asked for, but no CUDA device is available; use --device cpu "
                                     "or auto"))
            .arg(a["device"]);
    if (c == code::device_missing)
        return EngineText::tr("--device %1 does not exist (%2 CUDA devices)").arg(a["device"], a["count"]);
    if (c == code::batch_larger_than_data)
        return EngineText::tr("the micro-batch (--batch-size %1) is larger than the %2 training samples of %3; use at "
                              "most %2")
            .arg(a["batch_size"], a["samples"], a["dataset"]);
    if (c == code::output_dir_unusable)
        return EngineText::tr("the folder for runs cannot be used (--output-dir): %1").arg(a["error"]);
    // ------------------------------------------------------------ the run's files
    if (c == code::write_failed) {
        // The reasons a write meets, translated (in English the system's own
        // words, as accum-run prints them); any other in the system's words.
        const auto err = a.raw("errno");
        const QString reason = err == "ENOSPC"                     ? EngineText::tr("no space left on device")
                               : err == "EDQUOT"                   ? EngineText::tr("disk quota exceeded")
                               : err == "EIO"                      ? EngineText::tr("input/output error")
                               : err == "EROFS"                    ? EngineText::tr("read-only file system")
                               : err == "ENOENT"                   ? EngineText::tr("no such file or directory")
                               : err == "EACCES"                   ? EngineText::tr("permission denied")
                                                                   : a["reason"];
        const auto action = a.raw("action");
        if (action == "creating") return EngineText::tr("%1 while creating %2").arg(reason, a["path"]);
        if (action == "renaming")
            return EngineText::tr("%1 while renaming %2 to %3").arg(reason, a["path"], a["to"]);
        if (action == "syncing") return EngineText::tr("%1 while syncing %2").arg(reason, a["path"]);
        if (action == "removing") return EngineText::tr("%1 while removing %2").arg(reason, a["path"]);
        return EngineText::tr("%1 while writing %2").arg(reason, a["path"]);
    }
    // ----------------------------------------------------------------- data
    if (c == code::data_error) return EngineText::tr("the data cannot be used: %1").arg(a["detail"]);
    if (c == code::data_directory_missing)
        return EngineText::tr("the Fashion-MNIST directory %1 does not exist. Install Debian's package "
                              "dataset-fashion-mnist, or choose a folder with the four *-idx?-ubyte.gz files as the "
                              "data path.")
            .arg(a["path"]);
    if (c == code::data_file_missing)
        return EngineText::tr("the Fashion-MNIST file %1 is missing. Install Debian's package dataset-fashion-mnist, "
                              "or choose a folder with the four *-idx?-ubyte.gz files as the data path.")
            .arg(a["path"]);
    if (c == code::data_cannot_open) return EngineText::tr("cannot open %1 (%2)").arg(a["path"], a["reason"]);
    if (c == code::data_not_gzip) return EngineText::tr("%1 is not a gzip file (its first bytes are wrong)").arg(a["path"]);
    if (c == code::data_truncated)
        return EngineText::tr("%1 is truncated (the data ends early); reinstall or download it again").arg(a["path"]);
    if (c == code::data_corrupt)
        return EngineText::tr("the data file %1 cannot be used: %2").arg(a["path"], a["problem"]);
    if (c == code::data_bad_line) return EngineText::tr("%1, line %2: %3").arg(a["path"], a["line"], a["problem"]);
    if (c == code::csv_field_count)
        return EngineText::tr("%1, line %2: expected %3 fields, found %4")
            .arg(a["path"], a["line"], a["expected"], a["found"]);
    if (c == code::csv_not_a_number)
        return EngineText::tr("%1, line %2: the value '%4' in column '%3' is not a number")
            .arg(a["path"], a["line"], a["column"], a["value"]);
    if (c == code::csv_no_label_column)
        return EngineText::tr("%1, line %2: no label column '%3' in the header (columns: %4); choose one as the label "
                              "column")
            .arg(a["path"], a["line"], a["column"], a["columns"]);
    if (c == code::distributed_failure) {
        // The detail quotes c10d's or Gloo's English; what happened, and to whom, is said here.
        const auto kind = a.raw("kind");
        QString what;
        if (kind == "peer-lost")
            what = a.has("peer") ? EngineText::tr("rank %1 was lost (its process ended)").arg(a["peer"])
                                 : EngineText::tr("a rank was lost (its process ended)");
        else if (kind == "peer-failed")
            what = a.has("peer") ? EngineText::tr("rank %1 failed and said why").arg(a["peer"])
                                 : EngineText::tr("a rank failed and said why");
        else if (kind == "timeout")
            what = EngineText::tr("the other ranks did not answer within --dist-timeout");
        else if (kind == "address-in-use")
            what = EngineText::tr("the master's port is already in use");
        else if (kind == "unreachable")
            what = EngineText::tr("the master could not be reached");
        else
            what = EngineText::tr("the process group failed");
        auto text = EngineText::tr("Several processes: on rank %1, %2. [%3]").arg(a["rank"], what, a["detail"]);
        if (a.has("workers")) text += EngineText::tr(" Ranks started here: %1.").arg(a["workers"]);
        return text;
    }
    if (c == code::worker_program_missing)
        return EngineText::tr("%1 processes: the program for ranks 1 … N−1 (accum-run) was not found%2")
            .arg(a["processes"], a.has("program") ? EngineText::tr(" at %1").arg(a["program"]) : QString());
    return std::nullopt;
}

} // namespace

QString run_status_text(accum::RunStatus status) {
    switch (status) {
    case accum::RunStatus::Completed: return EngineText::tr("Completed");
    case accum::RunStatus::Stopped: return EngineText::tr("Stopped");
    case accum::RunStatus::OutOfMemory: return EngineText::tr("Out of memory");
    case accum::RunStatus::Diverged: return EngineText::tr("Diverged");
    case accum::RunStatus::Error: return EngineText::tr("Error");
    }
    return {};
}

QString engine_message(const accum::EngineMessage& message, const QString& english) {
    return render(message.code, Args(message.args, false), 0).value_or(english);
}

QString engine_message(const accum::SummaryRecord& summary) {
    return engine_message(summary.detail, QString::fromStdString(summary.message));
}

bool knows_engine_message(const std::string& code) {
    const std::map<std::string, std::string> none;
    return render(code, Args(none, false), 0).has_value();
}

std::optional<OutOfMemoryText> out_of_memory_text(const accum::SummaryRecord& summary) {
    if (summary.detail.code != code::out_of_memory) return std::nullopt;
    const Args rich(summary.detail.args, true), plain(summary.detail.args, false);
    OutOfMemoryText text;
    text.what = reached_zero_prefix(rich) + out_of_memory_what(rich, true);
    text.suggestion = inner(rich, "suggestion", 0);
    text.brief = plain.has("budget")
                     ? EngineText::tr("%1 × %2 over the %3 budget")
                           .arg(plain["batch_size"], plain["accumulation_steps"], plain["budget"])
                     : EngineText::tr("micro-batch %1 × %2").arg(plain["batch_size"], plain["accumulation_steps"]);
    return text;
}

QString samples_rate_text(double samples_per_second) {
    const double r = samples_per_second;
    const int decimals = !(r < 100) ? 0 : r >= 10 ? 1 : r >= 1 ? 2 : 3;
    return QCoreApplication::translate("studio::MainWindow", "%1 samples/s").arg(r, 0, 'f', decimals);
}

bool spread_includes_one(const QString& spread) {
    static const QRegularExpression range(QStringLiteral("^\\s*([0-9.eE+]+)\\s*[\u2013-]\\s*([0-9.eE+]+)\\s*$"));
    const auto m = range.match(spread);
    if (!m.hasMatch()) return false;
    bool low_ok = false, high_ok = false;
    const double low = m.captured(1).toDouble(&low_ok), high = m.captured(2).toDouble(&high_ok);
    return low_ok && high_ok && low <= 1.0 && 1.0 <= high;
}

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later

// The _nicmatrix extension: converts types and translates exceptions, nothing else. Every rule lives in
// matrix/ or core/: the results reader is the codec's from_json(ResultsFile), a sweep goes through
// matrix/sweep_request.hpp exactly as `nicmatrix sweep` does, compare is matrix/report's compare_results.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <pthread.h>
#include <csignal>
#include <exception>
#include <future>
#include <optional>
#include <stop_token>
#include <thread>

#include "agent/key_file.hpp"
#include "core/base/error.hpp"
#include "core/base/version.hpp"
#include "core/iperf3/iperf3_client.hpp"
#include "core/iperf3/iperf3_protocol.hpp"
#include "core/profile/categories.hpp"
#include "core/session/traffic_client.hpp"
#include "core/traffic/latency_histogram.hpp"
#include "core/traffic/rr_codec.hpp"
#include "core/traffic/test_spec_fields.hpp"
#include "core/traffic/traffic_codec.hpp"
#include "ethtool_ctl/lab.hpp"
#include "ethtool_ctl/lab_codec.hpp"
#include "matrix/model/comparison_codec.hpp"
#include "matrix/model/report_types.hpp"
#include "matrix/model/results_codec.hpp"
#include "matrix/profile_metrics.hpp"
#include "matrix/real_backends.hpp"
#include "matrix/report/report.hpp"
#include "matrix/results_store.hpp"
#include "matrix/runner.hpp"
#include "matrix/stats.hpp"
#include "matrix/sweep_request.hpp"

namespace py = pybind11;

namespace {

// JSON values (the codec's output) to Python objects and back.
py::object to_python(const nm::Json& j) {
    switch (j.type()) {
        case nm::Json::value_t::null: return py::none();
        case nm::Json::value_t::boolean: return py::bool_(j.get<bool>());
        case nm::Json::value_t::number_integer: return py::int_(j.get<int64_t>());
        case nm::Json::value_t::number_unsigned: return py::int_(j.get<uint64_t>());
        case nm::Json::value_t::number_float: return py::float_(j.get<double>());
        case nm::Json::value_t::string: return py::str(j.get_ref<const std::string&>());
        case nm::Json::value_t::array: {
            py::list out;
            for (const auto& v : j) out.append(to_python(v));
            return out;
        }
        case nm::Json::value_t::object: {
            py::dict out;
            for (const auto& [k, v] : j.items()) out[py::str(k)] = to_python(v);
            return out;
        }
        default: return py::none();  // binary and discarded values never come out of the codec
    }
}

nm::Json to_json_value(const py::handle& o) {
    if (o.is_none()) return nullptr;
    if (py::isinstance<py::bool_>(o)) return o.cast<bool>();
    if (py::isinstance<py::int_>(o)) return o.cast<int64_t>();
    if (py::isinstance<py::float_>(o)) return o.cast<double>();
    if (py::isinstance<py::str>(o)) return o.cast<std::string>();
    if (py::isinstance<py::dict>(o)) {
        nm::Json out = nm::Json::object();
        for (const auto& [k, v] : o.cast<py::dict>()) out[py::str(k).cast<std::string>()] = to_json_value(v);
        return out;
    }
    if (py::isinstance<py::list>(o) || py::isinstance<py::tuple>(o)) {
        nm::Json out = nm::Json::array();
        for (const auto& v : o) out.push_back(to_json_value(v));
        return out;
    }
    throw py::type_error("cannot pass a " + py::str(py::type::of(o)).cast<std::string>() + " to nicmatrix");
}

// Runs `work` on a thread of its own with the GIL released, while this (Python's main) thread polls for
// signals every 100 ms: a signal whose Python handler raises (Ctrl-C's KeyboardInterrupt, and the
// handlers nicmatrix.sweep() installs for SIGTERM and SIGHUP) requests a stop through `stop`, the work
// ends through its normal path (a sweep restores the interfaces and keeps its finished cells), and then
// that exception is raised. Later signals are dropped: the restore is never cut short. The worker starts
// with SIGINT, SIGTERM and SIGHUP blocked (its threads inherit that), so the engine's system calls are
// never interrupted by Python's handler; the signals reach this thread, where Python handles them.
template <typename Result>
Result run_interruptible(std::stop_source& stop, std::function<Result(std::stop_token)> work, std::optional<py::error_already_set>& callback_error) {
    std::packaged_task<Result(std::stop_token)> task(std::move(work));
    auto done = task.get_future();
    std::optional<py::error_already_set> interrupt;
    {
        sigset_t block, old;
        sigemptyset(&block);
        sigaddset(&block, SIGINT);
        sigaddset(&block, SIGTERM);
        sigaddset(&block, SIGHUP);
        py::gil_scoped_release release;
        pthread_sigmask(SIG_BLOCK, &block, &old);
        std::jthread worker(std::move(task), stop.get_token());
        pthread_sigmask(SIG_SETMASK, &old, nullptr);
        while (done.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
            py::gil_scoped_acquire gil;
            if (PyErr_CheckSignals() != 0) {
                if (!interrupt) interrupt.emplace();  // fetches the KeyboardInterrupt; later ones are dropped
                else PyErr_Clear();
                stop.request_stop();
            }
        }
    }
    if (interrupt) throw std::move(*interrupt);
    if (callback_error) throw std::move(*callback_error);
    return done.get();
}

// Sweep progress as dicts for a Python callable; the GIL is taken only for the call. An exception in the
// callback stops the sweep (through its normal path) and is raised once it has ended.
class PyProgress final : public nm::SweepObserver {
public:
    PyProgress(py::object callback, std::stop_source& stop, std::optional<py::error_already_set>& error)
        : callback_(std::move(callback)), stop_(stop), error_(error) {}
    ~PyProgress() override {
        py::gil_scoped_acquire gil;
        callback_ = py::object();
    }

    void on_note(const std::string& text) override {
        call([&] { return py::dict(py::arg("event") = "note", py::arg("text") = text); });
    }
    void on_cell_start(const nm::CellProgress& p) override {
        call([&] {
            py::dict d = progress(p);
            d["event"] = "cell_start";
            return d;
        });
    }
    void on_cell_done(const nm::CellProgress& p, const nm::CellResult& r) override {
        call([&] {
            py::dict d = progress(p);
            d["event"] = "cell_done";
            d["status"] = nm::status_name(r.status);
            d["cell"] = to_python(nm::Json(r));
            return d;
        });
    }

private:
    static py::dict progress(const nm::CellProgress& p) {
        py::dict d;
        d["number"] = p.number;
        d["total"] = p.total;
        d["key"] = p.cell ? p.cell->key : std::string();
        d["local"] = nm::describe_settings(p.local);
        d["remote"] = nm::describe_settings(p.remote);
        d["elapsed_s"] = p.elapsed_s;
        d["eta_s"] = p.eta_s;
        d["round"] = p.round;
        d["repetition"] = p.repetition;
        d["final"] = p.final;
        d["budget_s"] = p.budget_s;
        return d;
    }
    template <typename Make>
    void call(Make make) {
        py::gil_scoped_acquire gil;
        if (callback_.is_none() || error_) return;
        try {
            callback_(make());
        } catch (py::error_already_set& e) {
            error_.emplace(std::move(e));
            stop_.request_stop();
        }
    }

    py::object callback_;
    std::stop_source& stop_;
    std::optional<py::error_already_set>& error_;
};

// What compare and against are asked, with parse_adjustment's error for an unknown method.
nm::ComparisonOptions comparison_options(double confidence, const std::string& adjust, std::optional<double> margin) {
    if (margin && (*margin <= 0 || *margin >= 100)) throw nm::usage_error("margin: expected a percentage above 0 and below 100");
    return nm::ComparisonOptions{confidence, nm::parse_adjustment(adjust), margin};
}

nm::SweepRequest sweep_request(const py::dict& args) {
    nm::SweepRequest r;
    const auto get = [&](const char* key, auto& field) {
        if (args.contains(key) && !args[key].is_none()) field = args[key].cast<std::remove_reference_t<decltype(field)>>();
    };
    get("config_file", r.config_file);
    get("lab", r.lab);
    get("lab_name", r.lab_name);
    get("lab_from", r.lab_from);
    get("iface", r.iface);
    get("peer", r.peer);
    get("ip_version", r.ip_version);
    get("peer_iface", r.peer_iface);
    get("key_file", r.key_file);
    get("port", r.port);
    get("peer_kind", r.peer_kind);
    get("output", r.output);
    get("resume", r.resume);
    get("journal", r.journal);
    get("command", r.command);
    get("profile_categories", r.profile_categories);
    if (args.contains("precision") && !args["precision"].is_none()) r.precision_pct = args["precision"].cast<double>();
    if (args.contains("seed") && !args["seed"].is_none()) r.seed = args["seed"].cast<uint64_t>();
    if (args.contains("time_budget") && !args["time_budget"].is_none()) r.time_budget = py::str(args["time_budget"]).cast<std::string>();
    if (args.contains("topology") && !args["topology"].is_none()) {
        r.topology = nm::Json(args["topology"].cast<std::string>()).get<nm::LabTopology>();
    }
    return r;
}

}  // namespace

PYBIND11_MODULE(_nicmatrix, m) {
    m.doc() = "nicmatrix's C++ core";
    m.attr("__version__") = nm::kVersion;
    m.attr("__commit__") = nm::source_commit();

    // nm::Error crosses the boundary as nicmatrix.Error, with the C++ message.
    static py::exception<nm::Error> error(m, "Error");
    // By value: pybind11's translator type is void (*)(std::exception_ptr), which a lambda taking a reference
    // does not convert to.
    py::register_exception_translator([](std::exception_ptr p) {  // NOLINT(performance-unnecessary-value-param)
        try {
            if (p) std::rethrow_exception(p);
        } catch (const nm::Error& e) {
            error(e.what());
        }
    });

    m.def(
        "lab_describe_json", [](const std::string& name) { return nm::Json(nm::lab_describe(name)).dump(); }, py::arg("name"),
        "The lab NAME as a JSON string; raises Error if there is none.");

    py::class_<nm::ResultsFile>(m, "ResultsFile", "A results file as the C++ reader decoded it (nicmatrix/results/v1).")
        .def(
            "to_dict", [](const nm::ResultsFile& r) { return to_python(nm::Json(r)); },
            "The file as the C++ codec writes it: a dict of the schema's keys.")
        .def(
            "run_metrics",
            [](const nm::ResultsFile& r) {
                py::list cells;
                for (const auto& c : r.cells) {
                    py::list runs;
                    for (const auto& run : c.runs) runs.append(py::cast(nm::run_metrics(run)));
                    cells.append(runs);
                }
                return cells;
            },
            "Per cell, per run: the figures the sweep summarizes (matrix/stats run_metrics), by metric name.")
        .def_property_readonly("cell_count", [](const nm::ResultsFile& r) { return r.cells.size(); });

    m.def("load_results", &nm::load_results, py::arg("path"), py::call_guard<py::gil_scoped_release>(),
          "Reads a results file through the C++ reader; raises Error naming the file and the bad field.");
    m.def("save_results", &nm::save_results, py::arg("results"), py::arg("path"), py::call_guard<py::gil_scoped_release>(),
          "Writes a results file atomically.");
    m.def("known_metrics", &nm::known_metrics, "Metric names the summaries, report and compare know.");
    m.def("default_metric", &nm::default_metric, py::arg("results"),
          "matrix/report default_metric: rr_transactions_per_s when every cell is a request/response test, "
          "throughput_bps otherwise (what report and compare show when no metric is asked).");
    m.def(
        "latency_cdf",
        [](const std::string& histograms_json) {
            // The runs' histograms (rr.histogram, as the results file has them) merged: every transaction.
            nm::LatencyHistogram all;
            for (const auto& h : nm::Json::parse(histograms_json)) all.merge(h.get<nm::LatencyHistogram>());
            std::vector<std::pair<double, double>> points;
            for (const auto& [upper_ns, below] : all.cdf()) points.emplace_back(static_cast<double>(upper_ns) / 1000.0, below);
            return points;
        },
        py::arg("histograms_json"),
        "The CDF of every transaction of the given rr.histogram objects (a JSON array), merged: (the bucket's "
        "upper bound in microseconds, the fraction of transactions in it and below), one point per non-empty bucket.");
    m.def(
        "profile_categories", [] { return nm::profile::builtin_category_table().categories; },
        "The shipped category table's categories, in display order.");
    m.def("is_profile_metric", &nm::is_profile_metric, py::arg("name"),
          "True for the kernel profile's metrics: cpu:<category>, cpu:sender:<category>, cpu:receiver:<category>.");
    m.def("format_metric", &nm::format_metric, py::arg("metric"), py::arg("value"),
          "A metric value in human units, as report prints it: \"9.41 Gbit/s\", \"812 kpps\", \"38.2%\".");

    m.def(
        "adjust_p_values",
        [](const std::vector<double>& p, const std::string& method) { return nm::adjust_p_values(p, nm::parse_adjustment(method)); }, py::arg("p"),
        py::arg("method") = "holm", "matrix/stats adjust_p_values: Holm (holm), Benjamini-Hochberg (bh) or none.");
    m.def(
        "compare",
        [](const nm::ResultsFile& a, const nm::ResultsFile& b, const std::string& metric, const std::string& label_a, const std::string& label_b,
           double confidence, const std::string& adjust, std::optional<double> margin) {
            return to_python(nm::Json(nm::compare_results(a, b, metric, label_a, label_b, comparison_options(confidence, adjust, margin))));
        },
        py::arg("a"), py::arg("b"), py::arg("metric"), py::arg("label_a"), py::arg("label_b"), py::arg("confidence") = 95.0,
        py::arg("adjust") = "holm", py::arg("margin") = py::none(),
        "matrix/report's compare_results as `nicmatrix compare --format json` prints it: cells matched by their settings, "
        "the metric's summaries, B/A with its interval and verdict.");
    m.def(
        "compare_to_profile",
        [](const nm::ResultsFile& r, const std::string& metric, const std::string& reference, const std::string& label, double confidence,
           const std::string& adjust, std::optional<double> margin) {
            return to_python(nm::Json(nm::compare_to_profile(r, metric, reference, label, comparison_options(confidence, adjust, margin))));
        },
        py::arg("results"), py::arg("metric"), py::arg("reference"), py::arg("label"), py::arg("confidence") = 95.0, py::arg("adjust") = "holm",
        py::arg("margin") = py::none(),
        "`nicmatrix report --against REFERENCE --format json`: every cell against the reference profile's cell at the same MTU "
        "and traffic.");
    m.def(
        "summarize", [](const std::vector<double>& values, double confidence) { return to_python(nm::Json(nm::summarize(values, confidence))); },
        py::arg("values"), py::arg("confidence") = 95.0,
        "matrix/stats summarize: median with its order-statistic interval, mean, stddev, min, max, ci95 (of the mean).");
    m.def(
        "ratio_interval",
        [](const std::vector<double>& a, const std::vector<double>& b, double confidence, std::optional<double> margin) {
            const nm::RatioEstimate e = nm::ratio_interval(a, b, confidence, margin);
            py::dict d;
            const auto opt = [](const std::optional<double>& x) { return x ? py::object(py::float_(*x)) : py::object(py::none()); };
            d["ratio"] = opt(e.ratio);
            d["ci_low"] = opt(e.ci_low);
            d["ci_high"] = opt(e.ci_high);
            d["ci_confidence"] = opt(e.ci_confidence);
            d["verdict"] = nm::Json(e.verdict).get<std::string>();
            d["why"] = e.why;
            d["p_value"] = opt(e.p_value);
            d["equivalence_p_value"] = opt(e.equivalence_p_value);
            return d;
        },
        py::arg("a"), py::arg("b"), py::arg("confidence") = 95.0, py::arg("margin") = py::none(),
        "matrix/stats ratio_interval: median B / median A and the Hodges-Lehmann/Mann-Whitney interval of B/A.");
    m.def(
        "render_comparison",
        [](const nm::ResultsFile& a, const nm::ResultsFile& b, const std::string& metric, const std::string& label_a, const std::string& label_b,
           const std::string& format, double confidence, const std::string& adjust, std::optional<double> margin) {
            return nm::render_comparison(nm::compare_results(a, b, metric, label_a, label_b, comparison_options(confidence, adjust, margin)),
                                         nm::parse_table_format(format));
        },
        py::arg("a"), py::arg("b"), py::arg("metric"), py::arg("label_a"), py::arg("label_b"), py::arg("format"), py::arg("confidence") = 95.0,
        py::arg("adjust") = "holm", py::arg("margin") = py::none(), "The text `nicmatrix compare` prints (format table, md, csv or json).");
    m.def(
        "render_against",
        [](const nm::ResultsFile& r, const std::string& metric, const std::string& reference, const std::string& label, const std::string& format,
           double confidence, const std::string& adjust, std::optional<double> margin) {
            return nm::render_against(nm::compare_to_profile(r, metric, reference, label, comparison_options(confidence, adjust, margin)),
                                      nm::parse_table_format(format));
        },
        py::arg("results"), py::arg("metric"), py::arg("reference"), py::arg("label"), py::arg("format"), py::arg("confidence") = 95.0,
        py::arg("adjust") = "holm", py::arg("margin") = py::none(), "The text `nicmatrix report --against REFERENCE` prints.");
    m.def(
        "render_matrix",
        [](const nm::ResultsFile& r, const std::string& metric, const std::string& format) {
            return nm::render_matrix(nm::build_matrix(r, metric), nm::parse_table_format(format));
        },
        py::arg("results"), py::arg("metric"), py::arg("format"), "The text `nicmatrix report` prints.");

    m.def(
        "sweep",
        [](const py::dict& args, const py::object& progress) {
            const nm::SweepRequest request = sweep_request(args);
            nm::PreparedSweep prepared;
            {
                py::gil_scoped_release release;
                prepared = nm::prepare_sweep(request);
            }
            std::stop_source stop;
            std::optional<py::error_already_set> callback_error;
            PyProgress observer(progress, stop, callback_error);
            const auto outcome = run_interruptible<nm::SweepOutcome>(
                stop, [&](std::stop_token token) { return nm::execute_sweep(request, prepared, nm::real_backends(), &observer, std::move(token)); },
                callback_error);
            return py::make_tuple(outcome.results, prepared.output, outcome.interrupted);
        },
        py::arg("request"), py::arg("progress"),
        "Runs a sweep as `nicmatrix sweep` does (matrix/sweep_request.hpp) with the GIL released; request keys are "
        "SweepRequest's fields. Returns (ResultsFile, output path, interrupted). Ctrl-C stops it through its normal "
        "path (interfaces restored, finished cells kept in the file) and raises KeyboardInterrupt.");

    m.def(
        "run",
        [](const py::dict& spec_fields, const std::string& key_file, const std::string& peer_kind) {
            nm::TestSpec spec = to_json_value(spec_fields).get<nm::TestSpec>();
            if (peer_kind != "nicmatrix" && peer_kind != "iperf3") {
                throw nm::usage_error("peer_kind " + peer_kind + ": expected nicmatrix or iperf3");
            }
            const bool iperf3_peer = peer_kind == "iperf3";
            if (iperf3_peer && !spec_fields.contains("port")) spec.port = nm::iperf3::kDefaultPort;
            if (iperf3_peer && !key_file.empty())
                throw nm::usage_error("key_file: not with peer_kind iperf3: a stock iperf3 server has no nicmatrix key");
            // As `run --key-file` (and $NICMATRIX_KEY_FILE): the test and the server prove they hold the key.
            nm::TrafficClientOptions options;
            if (!iperf3_peer) {
                if (const auto file = nm::key_file_from(key_file); !file.empty()) options.key = std::string(nm::load_key(file).bytes());
            }
            std::stop_source stop;
            std::optional<py::error_already_set> no_callback;
            const nm::RunResult result = run_interruptible<nm::RunResult>(
                stop,
                [&](std::stop_token token) {
                    if (iperf3_peer) return nm::Iperf3Client().run(spec, std::move(token));
                    return nm::TrafficClient(options).run(spec, std::move(token));
                },
                no_callback);
            return to_python(nm::Json(result));
        },
        py::arg("spec"), py::arg("key_file") = std::string(), py::arg("peer_kind") = std::string("nicmatrix"),
        "One test through TrafficClient (as `nicmatrix run`), or through Iperf3Client against a stock `iperf3 -s` "
        "with peer_kind \"iperf3\" (port 5201 unless the spec gives one); spec keys are TestSpec's JSON fields, "
        "key_file as `--key-file`. Returns the result as `nicmatrix run --json` prints it. Ctrl-C ends the run "
        "(status interrupted) and raises KeyboardInterrupt.");

    m.def(
        "test_spec_fields",
        [] {
            // The field table (core/traffic/test_spec_fields.hpp), then the keys the codec writes by hand.
            py::list out;
            for (const auto& f : nm::kTestSpecFields) {
                py::dict row;
                row["key"] = f.key;
                row["sweep_axis"] = f.axis != nm::FieldAxis::None;
                row["column"] = f.column;
                row["help"] = f.help;
                out.append(row);
            }
            for (const std::string key : {NM_TEST_SPEC_HAND_KEYS}) {
                if (key == "payload_mix") continue;  // an RFC 2544 table's IMIX, not a test one asks for
                py::dict row;
                row["key"] = key;
                row["sweep_axis"] = false;
                row["column"] = "";
                row["help"] = "";
                out.append(row);
            }
            return out;
        },
        "TestSpec's JSON fields in order (the C++ field table): key, sweep_axis, column (a sweep cell's DataFrame "
        "column, \"\" = none) and help; the keys coded by hand come last (payload_mix left out: an RFC 2544 table sets it).");

    m.def(
        "test_spec", [](const py::dict& spec_fields) { return to_python(nm::Json(to_json_value(spec_fields).get<nm::TestSpec>())); }, py::arg("spec"),
        "A TestSpec read from these JSON fields and written back as results files record a run's spec.");
}

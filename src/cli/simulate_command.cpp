// `sluice simulate` (simulate_command.hpp): check every argument before the run, open every
// output before the run (a bad path fails at once, not after it), run, then write.
#include "simulate_command.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <iterator>
#include <memory>
#include <optional>

#include "limit_flags.hpp"
#include "progress_bar.hpp"
#include "simulate_collapse.hpp"
#include "simulate_output.hpp"
#include "sluice/core/time.hpp"
#include "sluice/simulate/builtin_scenarios.hpp"
#include "sluice/simulate/html_report.hpp"
#include "sluice/simulate/plots.hpp"
#include "sluice/simulate/series_csv.hpp"
#include "sluice/simulate/simulation.hpp"
#include "sluice/simulate/summary.hpp"

namespace sluice::cli {
namespace {

using simulate_output::fail;
using simulate_output::File;
using simulate_output::write_all;

// Everything the run needs, read and checked from the options.
struct Plan {
  simulate::Scenario scenario;
  std::vector<simulate::LimitUnderTest> limits;
  simulate::RunOptions run;
  ProgressBar::When progress = ProgressBar::When::kAuto;
  simulate::Scale scale = simulate::Scale::kCumulative;
};

core::Expected<std::vector<simulate::LimitUnderTest>> read_limits(const SimulateOptions& o,
                                                                  const simulate::Scenario& sc) {
  const bool wait = o.mode == "wait";
  std::vector<simulate::LimitUnderTest> out;
  auto add = [&](const std::string& text, const std::string& what) -> std::optional<core::Error> {
    auto s = read_limit(text, wait, what);
    if (!s) return core::make_error(s.error());
    out.push_back({text, *s});
    return std::nullopt;
  };
  for (const auto& text : o.limits) {
    if (auto e = add(text, "--limit")) return *e;
  }
  if (o.limits.empty()) {
    for (const auto& l : sc.limits) {
      if (auto e = add(l.spec, sc.where + ":" + std::to_string(l.line) + ": limit")) return *e;
    }
  }
  if (out.empty()) {
    return core::make_error("--limit: at least one limit is required (the scenario suggests none)");
  }
  if (out.size() > simulate::kMaxLimits) {
    return core::make_error("--limit: " + std::to_string(out.size()) + " limits, at most " +
                            std::to_string(simulate::kMaxLimits) + " side by side");
  }
  return out;
}

// A positive duration flag, or the fallback when it is not given.
core::Expected<core::Nanos> duration_flag(const std::string& text, const char* flag,
                                          core::Nanos fallback) {
  if (text.empty()) return fallback;
  auto d = core::parse_duration(text);
  if (!d) return core::make_error(std::string(flag) + ": " + d.error());
  if (*d <= 0) return core::make_error(std::string(flag) + ": must be more than 0");
  return *d;
}

core::Expected<Plan> make_plan(const SimulateOptions& o) {
  Plan p;
  if (o.progress == "always")
    p.progress = ProgressBar::When::kAlways;
  else if (o.progress == "never")
    p.progress = ProgressBar::When::kNever;
  else if (o.progress != "auto") {
    return core::make_error("--progress: '" + o.progress + "' (accepted: auto, always, never)");
  }
  if (o.plot == "rate")
    p.scale = simulate::Scale::kRate;
  else if (o.plot != "cumulative") {
    return core::make_error("--plot: '" + o.plot + "' (accepted: cumulative, rate)");
  }
  auto seed = core::parse_count(o.seed, "seed");
  if (!seed) return core::make_error("--seed: " + seed.error());
  p.run.seed = static_cast<std::uint64_t>(*seed);
  auto patience = read_max_wait(o.mode, o.max_wait);
  if (!patience) return core::make_error(patience.error());
  p.run.max_wait = *patience;
  if (o.scenario.empty()) {
    return core::make_error(
        "--scenario: required: a built-in's name (sluice simulate --list-scenarios) or a file");
  }
  auto sc = simulate::load_scenario(o.scenario);
  if (!sc) return core::make_error(sc.error());
  p.scenario = *sc;
  auto limits = read_limits(o, p.scenario);
  if (!limits) return core::make_error(limits.error());
  p.limits = *limits;
  auto duration = duration_flag(o.duration, "--duration", p.scenario.duration);
  if (!duration) return core::make_error(duration.error());
  p.run.duration = *duration;
  const core::Nanos fallback =
      p.scenario.bucket != 0 ? p.scenario.bucket : simulate::default_bucket(p.run.duration);
  auto bucket = duration_flag(o.bucket, "--bucket", fallback);
  if (!bucket) return core::make_error(bucket.error());
  p.run.bucket = *bucket;
  auto bounds = simulate::check_bounds(p.scenario, p.limits.size(), p.run);
  if (!bounds) return core::make_error(bounds.error());
  return p;
}

// The output files, opened before the run.
struct Outputs {
  File html{nullptr, std::fclose};
  File csv{nullptr, std::fclose};
  File trace{nullptr, std::fclose};
  std::vector<std::pair<std::string, File>> svgs;
};

std::optional<std::string> open(File& f, const std::string& path, const char* flag) {
  if (path.empty()) return std::nullopt;
  f.reset(std::fopen(path.c_str(), "wb"));
  if (!f) return std::string(flag) + ": cannot write '" + path + "': " + std::strerror(errno);
  return std::nullopt;
}

std::optional<std::string> open_outputs(const SimulateOptions& o, Outputs& out) {
  if (auto e = open(out.html, o.out, "--out")) return e;
  if (auto e = open(out.csv, o.csv, "--csv")) return e;
  if (auto e = open(out.trace, o.trace, "--trace")) return e;
  if (o.svg.empty()) return std::nullopt;
  for (const char* plot : {"admitted", "delay", "fairness"}) {
    File f{nullptr, std::fclose};
    if (auto e = open(f, o.svg + "-" + plot + ".svg", "--svg")) return e;
    out.svgs.emplace_back(plot, std::move(f));
  }
  return std::nullopt;
}

// Writes the generated requests as a replay trace, in large writes.
class TraceWriter {
 public:
  explicit TraceWriter(std::FILE* out) : out_(out) {}
  ~TraceWriter() { flush(); }
  void header(std::string command) {
    for (char& c : command) c = static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
    buf_ += "# t_us,key,cost from: " + command + "\n";
  }
  void add(const simulate::Arrival& a, std::string_view key) {
    fmt::format_to(std::back_inserter(buf_), "{},{},{}\n", a.t / core::kNanosPerMicro, key, a.cost);
    if (buf_.size() >= (1u << 16)) flush();
  }
  void flush() {
    if (out_ != nullptr && !buf_.empty()) std::fwrite(buf_.data(), 1, buf_.size(), out_);
    buf_.clear();
  }

 private:
  std::FILE* out_;
  std::string buf_;
};

std::string mode_text(const SimulateOptions& o, core::Nanos max_wait) {
  if (o.mode != "wait") return "reject";
  if (max_wait == core::kForever) return "wait (unbounded)";
  return "wait (max-wait " + core::format_duration(max_wait) + ")";
}

int write_outputs(const SimulateOptions& o, const Plan& p, const simulate::Result& r, Outputs& out,
                  std::FILE* err) {
  if (out.html) {
    const simulate::ReportInfo info{o.command, o.generator, mode_text(o, p.run.max_wait),
                                    p.run.seed, p.scale};
    if (!write_all(out.html.get(), simulate::html_report(p.scenario, r, info))) {
      fail(err, "--out: writing '" + o.out + "' failed");
      return 1;
    }
  }
  if (out.csv && !simulate::write_series_csv(r, out.csv.get())) {
    fail(err, "--csv: writing '" + o.csv + "' failed");
    return 1;
  }
  for (auto& [plot, f] : out.svgs) {
    const std::string text = plot == "admitted" ? simulate::admitted_plot(r, p.scale, true)
                             : plot == "delay"  ? simulate::delay_plot(r, true)
                                                : simulate::fairness_plot(r, true);
    if (!write_all(f.get(), text)) {
      fail(err, "--svg: writing '" + o.svg + "-" + plot + ".svg' failed");
      return 1;
    }
  }
  if (out.trace && std::ferror(out.trace.get())) {
    fail(err, "--trace: writing '" + o.trace + "' failed");
    return 1;
  }
  return 0;
}

int list_or_print(const SimulateOptions& o, std::FILE* out, std::FILE* err) {
  if (o.list_scenarios) {
    for (const auto& b : simulate::builtin_scenarios()) {
      auto sc = simulate::parse_scenario(b.yaml, std::string(b.name));
      std::fprintf(out, "%-16s %s\n", std::string(b.name).c_str(),
                   sc ? sc->description.c_str() : "");
    }
    for (const auto& m : simulate::collapse_models()) {
      fmt::print(out, "{:<16} {} (the collapse model: no YAML)\n", m.name, m.description);
    }
    return 0;
  }
  if (simulate::find_collapse_model(o.print_scenario) != nullptr) {
    return fail(err,
                "--print-scenario: '" + o.print_scenario +
                    "' is the built-in collapse model, not a YAML scenario (docs/simulate.md)");
  }
  const auto* b = simulate::find_builtin(o.print_scenario);
  if (b == nullptr) {
    return fail(err, "--print-scenario: '" + o.print_scenario +
                         "' is not a built-in scenario (sluice simulate --list-scenarios)");
  }
  std::fprintf(out, "# sluice simulate --scenario %s (docs/simulate.md)\n%.*s",
               o.print_scenario.c_str(), static_cast<int>(b->yaml.size()), b->yaml.data());
  return 0;
}

}  // namespace

int run_simulate(const SimulateOptions& o, std::FILE* out, std::FILE* err) {
  if (o.list_scenarios || !o.print_scenario.empty()) return list_or_print(o, out, err);
  if (const auto* model = simulate::find_collapse_model(o.scenario)) {
    return run_collapse(o, *model, out, err);
  }
  auto plan = make_plan(o);
  if (!plan) return fail(err, plan.error());
  const Plan& p = *plan;
  Outputs files;
  if (auto e = open_outputs(o, files)) return fail(err, *e);

  TraceWriter trace(files.trace.get());
  simulate::Hooks hooks;
  if (files.trace) {
    trace.header(o.command);
    hooks.request = [&](const simulate::Arrival& a, std::string_view key) { trace.add(a, key); };
  }
  ProgressBar bar(err, p.progress, core::format_duration(p.run.duration));
  hooks.progress = [&](double done) { bar.update(done); };
  auto result = simulate::run(p.scenario, p.limits, p.run, hooks);
  bar.finish();
  trace.flush();
  if (!result) return fail(err, result.error());

  const simulate::Result& r = *result;
  fmt::print(out, "scenario {}: {} requests in {} from {} source{}, bucket {}, seed {}, {} mode\n",
             p.scenario.name, r.requests, core::format_duration(r.duration), r.sources.size(),
             r.sources.size() == 1 ? "" : "s", core::format_duration(r.bucket), p.run.seed, o.mode);
  std::fputs(simulate::summary_text(r).c_str(), out);
  std::fflush(out);
  return write_outputs(o, p, r, files, err);
}

std::string shell_words(int argc, char** argv) {
  std::string out = "sluice";
  for (int i = 1; i < argc; ++i) {
    const std::string_view word = argv[i];
    const bool plain = !word.empty() && word.find_first_not_of(
                                            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                            "0123456789_./:=,@%+-") == std::string_view::npos;
    out += ' ';
    if (plain) {
      out += word;
      continue;
    }
    out += '\'';
    for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

}  // namespace sluice::cli

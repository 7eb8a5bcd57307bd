// run_collapse (simulate_collapse.hpp): the traffic options that mean nothing to a collapse
// model are refused, not ignored; every output is opened before the run.
#include "simulate_collapse.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "simulate_output.hpp"
#include "sluice/simulate/collapse_report.hpp"

namespace sluice::cli {
namespace {

using simulate_output::fail;
using simulate_output::File;
using simulate_output::write_all;

// A flag given that the collapse models do not take, or nothing.
std::string unused_flag(const SimulateOptions& o) {
  if (!o.duration.empty()) return "--duration";
  if (o.mode != "reject") return "--mode";
  if (!o.max_wait.empty()) return "--max-wait";
  if (!o.trace.empty()) return "--trace";
  if (o.plot != "cumulative") return "--plot";
  return "";
}

File open(const std::string& path) { return File(std::fopen(path.c_str(), "wb"), std::fclose); }

}  // namespace

int run_collapse(const SimulateOptions& o, const simulate::CollapseModel& model, std::FILE* out,
                 std::FILE* err) {
  if (auto flag = unused_flag(o); !flag.empty()) {
    return fail(err, flag + ": the collapse models have fixed phases and refuse at once; " + flag +
                         " applies to traffic scenarios only");
  }
  std::vector<simulate::Guard> guards;
  for (const auto& text : o.limits.empty() ? simulate::default_guards(model) : o.limits) {
    auto g = simulate::parse_guard(text);
    if (!g) return fail(err, "--limit " + g.error());
    guards.push_back(*g);
  }
  if (guards.size() > simulate::kMaxGuards) {
    return fail(err, fmt::format("--limit: {} guards, at most {} side by side", guards.size(),
                                 simulate::kMaxGuards));
  }
  auto seed = core::parse_count(o.seed, "seed");
  if (!seed) return fail(err, "--seed: " + seed.error());
  core::Nanos bucket = core::kNanosPerSecond;
  if (!o.bucket.empty()) {
    auto b = core::parse_duration(o.bucket);
    if (!b || *b < core::kNanosPerMilli * 10) {
      return fail(err, "--bucket: '" + o.bucket + "': a duration of 10ms or more");
    }
    bucket = *b;
  }
  // Outputs first: a bad path fails before the run.
  File html(nullptr, std::fclose), csv(nullptr, std::fclose);
  std::vector<std::pair<std::string_view, File>> svgs;
  auto opened = [&](File& f, const std::string& path, const char* flag) -> std::string {
    if (path.empty()) return "";
    f = open(path);
    return f ? "" : std::string(flag) + ": cannot write '" + path + "': " + std::strerror(errno);
  };
  if (auto e = opened(html, o.out, "--out"); !e.empty()) return fail(err, e);
  if (auto e = opened(csv, o.csv, "--csv"); !e.empty()) return fail(err, e);
  for (auto plot : simulate::kCollapsePlots) {
    if (o.svg.empty()) break;
    File f(nullptr, std::fclose);
    if (auto e = opened(f, o.svg + "-" + std::string(plot) + ".svg", "--svg"); !e.empty()) {
      return fail(err, e);
    }
    svgs.emplace_back(plot, std::move(f));
  }

  auto r = simulate::run_collapse(model, guards, bucket, static_cast<std::uint64_t>(*seed));
  if (!r) return fail(err, r.error());
  fmt::print(out, "scenario {}: {}; {} guards, bucket {}, seed {}\n", model.name, model.description,
             guards.size(), core::format_duration(bucket), *seed);
  std::fputs(simulate::collapse_summary_text(*r).c_str(), out);
  std::fflush(out);
  if (html && !write_all(html.get(), simulate::collapse_html(*r, o.command, o.generator,
                                                             static_cast<std::uint64_t>(*seed)))) {
    fail(err, "--out: writing '" + o.out + "' failed");
    return 1;
  }
  if (csv && !simulate::write_collapse_csv(*r, csv.get())) {
    fail(err, "--csv: writing '" + o.csv + "' failed");
    return 1;
  }
  for (auto& [plot, f] : svgs) {
    if (!write_all(f.get(), simulate::collapse_plot(*r, plot, true))) {
      fail(err, "--svg: writing '" + o.svg + "-" + std::string(plot) + ".svg' failed");
      return 1;
    }
  }
  return 0;
}

}  // namespace sluice::cli

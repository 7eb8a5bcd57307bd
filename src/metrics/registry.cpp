// Registry (sluice/metrics/registry.hpp): collecting every collector's samples, summing equal
// series, and writing the exposition text.
#include "sluice/metrics/registry.hpp"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "sluice/proto/http/prometheus_text.hpp"

namespace sluice::metrics {

Registry::Registration& Registry::Registration::operator=(Registration&& o) noexcept {
  if (this != &o) {
    reset();
    registry_ = o.registry_;
    it_ = o.it_;
    o.registry_ = nullptr;
  }
  return *this;
}

void Registry::Registration::reset() {
  if (registry_ == nullptr) return;
  std::lock_guard lock(registry_->mutex_);
  registry_->collectors_.erase(it_);
  registry_ = nullptr;
}

// The samples of one collection, families in first-seen order, series summed.
class Registry::Gather final : public Sink {
 public:
  struct Series {
    std::string labels;  // as the exposition writes them, after the name: suffix{k="v",...}
    std::string suffix;
    std::vector<std::pair<std::string, std::string>> pairs;
    double value = 0;
  };
  struct FamilySamples {
    std::string name;
    Kind kind;
    std::string help;
    std::vector<Series> series;
    std::map<std::string, std::size_t, std::less<>> index;  // labels -> series
  };

  void declare(const Family& f) override { family(f); }

  using Sink::add;
  void add(const Family& f, std::string_view suffix, std::initializer_list<Label> labels,
           double value) override {
    FamilySamples& fam = family(f);
    std::vector<std::pair<std::string, std::string>> pairs;
    pairs.reserve(labels.size());
    std::string text(suffix);
    char sep = '{';
    for (const Label& l : labels) {
      pairs.emplace_back(l.name, l.value);
      text += sep;
      text.append(l.name).append("=\"").append(proto::http::prometheus_label(l.value)).append("\"");
      sep = ',';
    }
    if (text.size() > suffix.size()) text += '}';
    auto it = fam.index.find(text);
    if (it == fam.index.end()) {
      fam.index.emplace(text, fam.series.size());
      fam.series.push_back(Series{std::move(text), std::string(suffix), std::move(pairs), value});
    } else {
      fam.series[it->second].value += value;
    }
  }

  std::vector<FamilySamples> families;

 private:
  FamilySamples& family(const Family& f) {
    for (auto& fam : families) {
      if (fam.name == f.name) return fam;
    }
    families.push_back(FamilySamples{std::string(f.name), f.kind, std::string(f.help), {}, {}});
    return families.back();
  }
};

Registry::Registration Registry::add(Collector collector) {
  std::lock_guard lock(mutex_);
  collectors_.push_back(std::move(collector));
  return Registration(this, std::prev(collectors_.end()));
}

void Registry::collect(Gather& sink) const {
  std::lock_guard lock(mutex_);
  for (const auto& c : collectors_) c(sink);
}

std::string Registry::text() const {
  Gather g;
  collect(g);
  std::string out;
  for (const auto& fam : g.families) {
    static constexpr std::string_view kTypes[] = {"counter", "gauge", "histogram"};
    proto::http::prometheus_family(out, fam.name, kTypes[static_cast<int>(fam.kind)], fam.help);
    for (const auto& s : fam.series) proto::http::prometheus_line(out, fam.name, s.labels, s.value);
  }
  return out;
}

double Registry::value(std::string_view name, std::initializer_list<Label> labels) const {
  Gather g;
  collect(g);
  double total = 0;
  for (const auto& fam : g.families) {
    if (!name.starts_with(fam.name)) continue;
    for (const auto& s : fam.series) {
      if (name.substr(fam.name.size()) != s.suffix) continue;
      bool all = true;
      for (const Label& want : labels) {
        bool found = false;
        for (const auto& [k, v] : s.pairs) found = found || (k == want.name && v == want.value);
        all = all && found;
      }
      if (all) total += s.value;
    }
  }
  return total;
}

std::vector<Registry::Sample> Registry::samples(
    std::initializer_list<std::string_view> families) const {
  Gather g;
  collect(g);
  std::vector<Sample> out;
  for (const auto& fam : g.families) {
    if (std::find(families.begin(), families.end(), fam.name) == families.end()) continue;
    for (const auto& s : fam.series) out.push_back(Sample{fam.name + s.suffix, s.pairs, s.value});
  }
  return out;
}

}  // namespace sluice::metrics

// One registry for every metric of the process: each layer registers a collector that reads
// its own counters, and the registry alone writes the Prometheus text (and answers tests).
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::metrics {

enum class Kind { kCounter, kGauge, kHistogram };

// A metric family: samples of one name, one type, one help text.
struct Family {
  std::string_view name;
  Kind kind;
  std::string_view help;
};

struct Label {
  std::string_view name;
  std::string_view value;
};

// Where a collector puts its samples. Samples of one family with the same labels, from any
// number of collectors (an event loop each), are summed: per-loop counters read as one.
class Sink {
 public:
  virtual ~Sink() = default;
  virtual void add(const Family& family, std::initializer_list<Label> labels, double value) {
    add(family, "", labels, value);
  }
  // A sample named family.name + suffix: a histogram's "_bucket", "_sum" and "_count".
  virtual void add(const Family& family, std::string_view suffix,
                   std::initializer_list<Label> labels, double value) = 0;
  // A family with no samples yet still gets its HELP and TYPE lines.
  virtual void declare(const Family& family) = 0;
};

using Collector = std::function<void(Sink&)>;

class Registry {
 public:
  // Unregisters its collector when destroyed (or reset); movable.
  class Registration {
   public:
    Registration() = default;
    Registration(Registry* r, std::list<Collector>::iterator it) : registry_(r), it_(it) {}
    Registration(Registration&& o) noexcept : registry_(o.registry_), it_(o.it_) {
      o.registry_ = nullptr;
    }
    Registration& operator=(Registration&& o) noexcept;
    Registration(const Registration&) = delete;
    Registration& operator=(const Registration&) = delete;
    ~Registration() { reset(); }
    void reset();

   private:
    Registry* registry_ = nullptr;
    std::list<Collector>::iterator it_;
  };

  // Thread-safe. The collector runs on the thread that asks for the text, so it reads only
  // atomics or what it guards itself.
  [[nodiscard]] Registration add(Collector collector);

  // Prometheus text exposition format 0.0.4: families in the order first seen, HELP and TYPE
  // once each, then their samples.
  std::string text() const;

  // The sum of the samples of `name` whose labels include every one of `labels` (tests, and
  // anyone who wants one number); 0 when there is none.
  double value(std::string_view name, std::initializer_list<Label> labels = {}) const;

  // One series of a collection, summed as text() sums them.
  struct Sample {
    std::string name;  // the family's name and the suffix
    std::vector<std::pair<std::string, std::string>> labels;
    double value = 0;
  };
  // The series of the families named `families` (the dashboard's readers); one collection.
  std::vector<Sample> samples(std::initializer_list<std::string_view> families) const;

 private:
  class Gather;
  void collect(Gather& sink) const;

  mutable std::mutex mutex_;
  std::list<Collector> collectors_;
};

}  // namespace sluice::metrics

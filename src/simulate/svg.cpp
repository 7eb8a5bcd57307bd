// The SVG writer (sluice/simulate/svg.hpp).
#include "sluice/simulate/svg.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>

namespace sluice::simulate::svg {

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string num(double v) {
  std::string s = fmt::format("{:.2f}", v);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

std::vector<double> ticks(double max, int target) {
  if (!(max > 0)) max = 1;
  const double rough = max / target;
  const double decade = std::pow(10.0, std::floor(std::log10(rough)));
  double step = decade;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * decade;
    if (step >= rough) break;
  }
  std::vector<double> out;
  for (int i = 0;; ++i) {
    out.push_back(i * step);
    if (i * step >= max * (1 - 1e-9)) break;
  }
  return out;
}

std::string_view colour(std::size_t i) {
  static constexpr std::array<std::string_view, 7> kPalette{
      "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"};
  return kPalette[i % kPalette.size()];
}

Canvas::Canvas(int width, int height, bool standalone, std::string_view title) {
  out_ = fmt::format(
      "<svg {}width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" font-family=\"sans-serif\" "
      "role=\"img\">\n",
      standalone ? "xmlns=\"http://www.w3.org/2000/svg\" " : "", width, height, width, height);
  out_ += "<title>" + escape(title) + "</title>\n";
  if (standalone) rect(0, 0, width, height, "#fff");
}

void Canvas::rect(double x, double y, double w, double h, std::string_view fill) {
  out_ += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>\n", num(x),
                      num(y), num(w), num(h), fill);
}

void Canvas::line(double x1, double y1, double x2, double y2, std::string_view stroke, double width,
                  std::string_view dash) {
  out_ +=
      fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"{}\"",
                  num(x1), num(y1), num(x2), num(y2), stroke, num(width));
  if (!dash.empty()) out_ += fmt::format(" stroke-dasharray=\"{}\"", dash);
  out_ += "/>\n";
}

void Canvas::path(std::string_view d, std::string_view stroke, std::string_view fill, double width,
                  std::string_view dash) {
  out_ += fmt::format("<path d=\"{}\" stroke=\"{}\" fill=\"{}\" stroke-width=\"{}\"", d, stroke,
                      fill, num(width));
  if (!dash.empty()) out_ += fmt::format(" stroke-dasharray=\"{}\"", dash);
  out_ += "/>\n";
}

void Canvas::text(double x, double y, std::string_view s, std::string_view anchor, int size,
                  std::string_view fill) {
  out_ += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"{}\" fill=\"{}\"", num(x), num(y), size,
                      fill);
  if (anchor != "start") out_ += fmt::format(" text-anchor=\"{}\"", anchor);
  out_ += ">" + escape(s) + "</text>\n";
}

std::string Canvas::finish() { return out_ + "</svg>\n"; }

Frame::Frame(double left, double top, double width, double height, double x_max, double y_max)
    : left_(left),
      top_(top),
      width_(width),
      height_(height),
      x_max_(x_max > 0 ? x_max : 1),
      y_max_(y_max > 0 ? y_max : 1) {}

void Frame::axes(Canvas& c, const std::vector<double>& xs, const std::vector<double>& ys,
                 bool x_labels) const {
  for (double v : ys) {
    c.line(left_, y(v), left_ + width_, y(v), v == 0 ? "#888" : "#e4e4e4", 1);
    c.text(left_ - 6, y(v) + 4, num(v), "end", 11, "#555");
  }
  for (double v : xs) {
    if (v > x_max_ * (1 + 1e-9)) break;
    c.line(x(v), top_, x(v), top_ + height_, "#e4e4e4", 1);
    if (x_labels) c.text(x(v), top_ + height_ + 15, num(v), "middle", 11, "#555");
  }
}

std::string Frame::trace(const std::vector<double>& values, double step, bool stepped,
                         bool closed) const {
  std::string d =
      "M" + num(x(0)) + " " + num(y(closed || !stepped || values.empty() ? 0 : values[0]));
  double end = 0;
  for (std::size_t i = 0; i < values.size() && !std::isnan(values[i]); ++i) {
    end = static_cast<double>(i + 1) * step;
    if (stepped) {
      if (i > 0 || closed) d += "V" + num(y(values[i]));
      d += "H" + num(x(end));
    } else {
      d += "L" + num(x(end)) + " " + num(y(values[i]));
    }
  }
  if (closed) d += "V" + num(y(0)) + "Z";
  return d;
}

namespace {

double entry_width(const LegendEntry& e) {
  return 19 + 6.8 * static_cast<double>(e.text.size()) + 18;
}

}  // namespace

int legend_lines(const std::vector<LegendEntry>& entries, double width) {
  int lines = 1;
  double x = 0;
  for (const auto& e : entries) {
    if (x > 0 && x + entry_width(e) > width) {
      ++lines;
      x = 0;
    }
    x += entry_width(e);
  }
  return lines;
}

void legend(Canvas& c, double left, double width, double y,
            const std::vector<LegendEntry>& entries) {
  double x = 0;
  for (const auto& e : entries) {
    if (x > 0 && x + entry_width(e) > width) {
      x = 0;
      y += kLegendLine;
    }
    const double at = left + x;
    if (e.kind == 'b') c.rect(at, y - 9, 14, 10, e.colour);
    if (e.kind == 'l' || e.kind == 'd') {
      c.line(at, y - 4, at + 14, y - 4, e.colour, 2, e.kind == 'd' ? "4 3" : "");
    }
    c.text(at + (e.kind == '-' ? 0 : 19), y, e.text, "start", 12, e.kind == '-' ? "#777" : "#333");
    x += entry_width(e);
  }
}

}  // namespace sluice::simulate::svg
